package whisper

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// devBeams are a device search's step records and state, kept by the
// model and reused by every window.
type devBeams struct {
	passes []int
	vars   []plan.Vars
	ends   []int  // the end of each step's passes
	init   []byte // the state's header and sums, written with the first chunk
	state  []byte
}

// deviceBeams runs a window's beam search on the backend with the host
// out of the loop: one chain (plan.RunChainIO) that feeds the window's
// initial tokens init (promptSteps: the prompt, PassTrackStart for the
// no-speech probability, which it returns) and copies the prompt's cache
// to every beam (PassBeamCopy), then runs the search's steps, each
// PassBeamCopy (the beams re-selected by the last step, from the second
// step on that moves a token), PassBeams and PassBeamTop (the filters,
// the candidates and plan.WhisperBeams, which ranks them, keeps the
// finished sequences and writes the next step's sources, tokens and
// filter history); the window's first step ranks the prompt's candidates
// (PassBeamTopFirst). The host writes the tokens and the search's
// settings (st, its initial state) with the first chunk and reads the
// state back every ChainTokens steps (DefaultBeamChainSteps on a GPU),
// stopping once the search has; the state's status is the chain's halt
// word (plan.ChainHalt), so the steps a chunk runs past the search's end
// cost their launches, not their work, and leave the state as it is.
func (m *Model) deviceBeams(f *logitFilter, init []int32, sotIndex, nb int, st []int32, opt DecodeOptions) ([]int32, float32, float64, error) {
	ctx, rows, fin := m.H.NTextCtx, m.lay.beams, m.lay.beamFin
	steps, pos := int(st[plan.BeamsLimit]), len(init)
	if pos+steps-1 > ctx || nb > rows || pos > m.lay.maxTokens || sotIndex >= pos {
		return nil, 0, 0, fmt.Errorf("whisper: cannot run %d beams for %d steps after %d initial tokens (%d beams, context %d, at most %d tokens fed)", nb, steps, pos, rows, ctx, m.lay.maxTokens)
	}
	if err := m.setFilter(f); err != nil {
		return nil, 0, 0, err
	}
	set := plan.SampleSettings{Temp: 0, TopP: 1, Logprobs: true, Top: nb + 1}
	w := make([]uint32, plan.SampleSettingsWords)
	set.Encode(w)
	b := make([]byte, 0, 4*len(w))
	for _, v := range w {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if err := m.exec.Write(m.lay.topSet, 0, b); err != nil {
		return nil, 0, 0, err
	}
	// the writes a chain's first chunk runs after (a GPU queues them,
	// waiting for nothing): the tokens, and every beam's source beam 0
	if err := m.writeTokens(init); err != nil {
		return nil, 0, 0, err
	}
	moved, err := m.writeBeamSrc(make([]int, rows))
	if err != nil {
		return nil, 0, 0, err
	}
	c := &m.beams
	c.passes, c.vars = c.passes[:0], c.vars[:0]
	add := func(pass int, v plan.Vars) {
		c.passes = append(c.passes, pass)
		c.vars = append(c.vars, v)
	}
	promptSteps(add, pos, sotIndex, steps, st[plan.BeamsEndTs])
	if moved { // every beam starts as the prompt
		add(PassBeamCopy, plan.Vars{plan.VarPos: 0, plan.VarNTok: int64(pos)})
	}
	lead := len(c.passes) // the prompt's steps: their own batch (plan.ChainIO.Lead)
	top, first := PassBeamTop, PassBeamTopFirst
	if !f.timestamps {
		top, first = PassBeamTopText, PassBeamTopFirstText
	}
	var fv plan.Vars
	f.setFilterVars(&fv, m.H.NVocab, 0)
	add(first, fv)
	c.ends = append(c.ends[:0], len(c.passes)) // where each step's passes end
	for i := 1; i < steps; i++ {
		if i > 1 {
			add(PassBeamCopy, plan.Vars{plan.VarPos: int64(pos), plan.VarNTok: int64(i - 1)})
		}
		p := int64(pos + i - 1)
		add(PassBeams, plan.Vars{plan.VarPos: p, plan.VarNTok: 1, plan.VarKVLen: p + 1})
		fv[plan.VarUser0] = int64(i)
		add(top, fv)
		c.ends = append(c.ends, len(c.passes))
	}
	c.init = appendI32(c.init[:0], st)
	words := plan.BeamsStateWords(rows, fin, ctx)
	if cap(c.state) < 4*words {
		c.state = make([]byte, 4*words)
	}
	buf := c.state[:4*words]
	copy(buf, c.init) // the header until the first read-back: nothing finished
	word := func(i int) int32 { return int32(binary.LittleEndian.Uint32(buf[4*i:])) }
	noSpeech := make([]byte, 4)
	io := plan.ChainIO{In: m.lay.beamState, Src: c.init, Out: m.lay.beamState, Dst: buf, Lead: lead,
		Also: []plan.ChainRead{{Buf: m.lay.track, Off: 4 * plan.TrackNoSpeech, Dst: noSpeech}},
		Halt: &plan.ChainHalt{Buf: m.lay.beamState, Off: 4 * plan.BeamsStatus, Running: plan.BeamsRunning}}
	// n steps a read-back (a chain call each), the prompt's before the
	// first; the steps past the search's end halt (see above)
	n := m.chainTokens(opt, DefaultBeamChainSteps)
	var cancel error
	for step, lo := 0, 0; step < steps; step += n {
		hi := c.ends[min(step+n, steps)-1]
		_, err = plan.RunChainIO(m.exec, c.passes[lo:hi], c.vars[lo:hi], hi-lo, &io, func(int) bool {
			cancel = opt.canceled()
			return cancel == nil
		})
		if err != nil || cancel != nil || word(plan.BeamsStatus) != plan.BeamsRunning {
			break
		}
		io.Src, io.Lead = nil, 0 // written and run with the first chunk
		lo = hi
	}
	if err != nil {
		return nil, 0, 0, err
	}
	if cancel != nil {
		return nil, 0, 0, cancel
	}
	state := make([]int32, words)
	for i := range state {
		state[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	toks, sum, err := bestFinished(state, rows, fin, ctx)
	return toks, sum, math.Exp(float64(math.Float32frombits(binary.LittleEndian.Uint32(noSpeech)))), err
}

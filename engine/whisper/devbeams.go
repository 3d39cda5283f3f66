package whisper

import (
	"encoding/binary"
	"fmt"

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
// out of the loop: one chain (plan.RunChainIO) of steps, each
// PassBeamCopy (the beams re-selected by the last step, from the second
// step on that moves a token), PassBeams and PassBeamTop (the filters,
// the candidates and plan.WhisperBeams, which ranks them, keeps the
// finished sequences and writes the next step's sources, tokens and
// filter history); the window's first step ranks the prompt's candidates
// (PassBeamTopFirst). The host writes the search's settings (st, its
// initial state) with the first chunk and reads the state back every
// ChainTokens steps (DefaultBeamChainSteps on a GPU; fewer once a
// sequence has finished), stopping once the search has; steps past the
// stop leave the state as it is. pos is the prompt's length, the
// logits after it left on the backend by promptWindow.
func (m *Model) deviceBeams(f *logitFilter, pos, nb int, st []int32, opt DecodeOptions) ([]int32, float32, error) {
	ctx, rows, fin := m.H.NTextCtx, m.lay.beams, m.lay.beamFin
	steps := int(st[plan.BeamsLimit])
	if pos+steps-1 > ctx || nb > rows {
		return nil, 0, fmt.Errorf("whisper: cannot run %d beams for %d steps from position %d (%d beams, context %d)", nb, steps, pos, rows, ctx)
	}
	if err := m.setFilter(f); err != nil {
		return nil, 0, err
	}
	set := plan.SampleSettings{Temp: 0, TopP: 1, Logprobs: true, Top: nb + 1}
	w := make([]uint32, plan.SampleSettingsWords)
	set.Encode(w)
	b := make([]byte, 0, 4*len(w))
	for _, v := range w {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if err := m.exec.Write(m.lay.topSet, 0, b); err != nil {
		return nil, 0, err
	}
	c := &m.beams
	c.passes, c.vars = c.passes[:0], c.vars[:0]
	add := func(pass int, v plan.Vars) {
		c.passes = append(c.passes, pass)
		c.vars = append(c.vars, v)
	}
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
	io := plan.ChainIO{In: m.lay.beamState, Src: c.init, Out: m.lay.beamState, Dst: buf}
	// n steps a read-back (a chain call each) until a sequence has
	// finished, then n/8: the search ends a few steps after its first
	// finished sequence, and a step run past the end costs a beam step of
	// GPU time (~1.3 ms on the H200) where a read-back costs a wait.
	n := m.chainTokens(opt, DefaultBeamChainSteps)
	var cancel error
	var err error
	for step, lo := 0, 0; step < steps; {
		k := n
		if word(plan.BeamsFinished) > 0 {
			k = max(n/8, 1)
		}
		hi := c.ends[min(step+k, steps)-1]
		_, err = plan.RunChainIO(m.exec, c.passes[lo:hi], c.vars[lo:hi], hi-lo, &io, func(int) bool {
			cancel = opt.canceled()
			return cancel == nil
		})
		if err != nil || cancel != nil || word(plan.BeamsStatus) != plan.BeamsRunning {
			break
		}
		io.Src = nil // written with the first chunk
		step, lo = step+k, hi
	}
	if err != nil {
		return nil, 0, err
	}
	if cancel != nil {
		return nil, 0, cancel
	}
	state := make([]int32, words)
	for i := range state {
		state[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return bestFinished(state, rows, fin, ctx)
}

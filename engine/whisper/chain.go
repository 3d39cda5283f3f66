package whisper

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// DefaultChainTokens is how many greedy tokens a window decodes between
// two looks by the host (DecodeOptions.ChainTokens) on a backend that
// reads back inside its batches' waits (plan.IOChainer: a GPU). Elsewhere
// (the CPU) a look costs no wait worth saving, so the host looks after
// every token and stops the chain at the window's end at once. 32 keeps a
// window's waits within 1/16 a token (issue #36: 0.064 on jfk, 0.045 on a
// long-form window; 16 gave 0.100 and 0.080). The steps a batch runs past
// the window's end halt (the track's status is the chain's halt word),
// but a halted step still costs its kernels' launches (~65 µs a greedy
// token on the H200, a sixth of a decoded one), so more tokens a look
// cost more than the waits they save: a jfk window took 0.382 ms a token
// at 32, 0.464 at 64 (main, unhalted at 32: 0.408; BENCHMARKS: "Whisper
// chains that halt on the device").
const DefaultChainTokens = 32

// chainBufs are a chained window's step records and read-back, kept by
// the model and reused by every window.
type chainBufs struct {
	passes []int
	vars   []plan.Vars
	init   []byte // the initial tokens, written with the chain's first chunk
	track  []byte
}

// decodeChained decodes a greedy window on the backend with the host out
// of the loop: one chain of steps (plan.RunChainIO: one graph a chunk on
// a GPU, the initial tokens written with the first) runs the prompt, opens the window's track (PassTrackStart:
// the no-speech probability) and then alternates PassSelect (the filters,
// the greedy choice, plan.WhisperTrack's log-probability and stop rules,
// the token written where the next step embeds it) and PassStep. The host
// reads the track back every ChainTokens tokens, stops the chain once the
// track says the window ended, and sums the log-probabilities (float64,
// in order, as the host decoder does) for the temperature fallback it
// decides after the window. Steps past the stop are issued on a GPU until
// the chunk ends, but the track's status is the chain's halt word
// (plan.ChainHalt, from the step after PassTrackStart, which resets it),
// so their kernels return at once: nothing they would write (the KV
// cache's rows past the window's tokens, the logits) is read after the
// window, whose track they leave as it is.
func (m *Model) decodeChained(sp Specials, init []int32, sotIndex, sampleLen int, filter *logitFilter, opt DecodeOptions) (*DecodeResult, error) {
	ctx := m.H.NTextCtx
	if err := m.setFilter(filter); err != nil {
		return nil, err
	}
	if len(init) > m.lay.maxTokens || len(init) >= ctx {
		return nil, fmt.Errorf("whisper: cannot feed %d initial tokens (at most %d, context %d)", len(init), m.lay.maxTokens, ctx)
	}
	c := &m.chain
	c.passes, c.vars = c.passes[:0], c.vars[:0]
	add := func(pass int, v plan.Vars) {
		c.passes = append(c.passes, pass)
		c.vars = append(c.vars, v)
	}
	// the steps from opened on read the track's status (the chain's halt
	// word); the prompt's, lead, are a batch of their own (plan.ChainIO.Lead)
	opened := promptSteps(add, len(init), sotIndex, sampleLen, opt.EndTimestamp)
	lead := len(c.passes)
	sel := PassSelect
	if !filter.timestamps {
		sel = PassSelectText
	}
	var fv plan.Vars
	filter.setFilterVars(&fv, m.H.NVocab, 0)
	for j := range sampleLen {
		fv[plan.VarUser0] = int64(j)
		add(sel, fv)
		if j+1 < sampleLen {
			p := int64(len(init) + j)
			add(PassStep, plan.Vars{plan.VarPos: p, plan.VarNTok: 1, plan.VarKVLen: p + 1})
		}
	}
	words := plan.TrackHeader + 2*ctx
	if cap(c.track) < 4*words {
		c.track = make([]byte, 4*words)
	}
	tr := c.track[:4*words]
	word := func(i int) int32 { return int32(binary.LittleEndian.Uint32(tr[4*i:])) }
	n := m.chainTokens(opt, DefaultChainTokens)
	c.init = appendI32(c.init[:0], init)
	io := plan.ChainIO{In: m.lay.tokens, Src: c.init, Out: m.lay.track, Dst: tr, Lead: lead,
		Halt: &plan.ChainHalt{Buf: m.lay.track, Off: 4 * plan.TrackStatus, Running: plan.TrackRunning, From: opened}}
	var cancel error
	_, err := plan.RunChainIO(m.exec, c.passes, c.vars, 2*n, &io, func(int) bool {
		if cancel = opt.canceled(); cancel != nil {
			return false
		}
		return word(plan.TrackStatus) == plan.TrackRunning
	})
	if err != nil {
		return nil, err
	}
	if cancel != nil {
		return nil, cancel
	}
	kept, steps := int(word(plan.TrackKept)), int(word(plan.TrackSteps))
	if kept < 0 || kept > ctx || steps < kept || steps > ctx {
		return nil, fmt.Errorf("whisper: the backend's track is inconsistent (%d tokens kept, %d chosen)", kept, steps)
	}
	f32 := func(i int) float32 { return math.Float32frombits(uint32(word(i))) }
	res := &DecodeResult{Temperature: opt.Temperature, Language: opt.Language,
		NoSpeechProb: math.Exp(float64(f32(plan.TrackNoSpeech))),
		Repetitive:   word(plan.TrackStatus) == plan.TrackRepeated}
	res.Tokens = make([]int32, kept)
	for i := range kept {
		res.Tokens[i] = word(plan.TrackHeader + i)
	}
	for i := range steps {
		res.SumLogprob += float64(f32(plan.TrackHeader + ctx + i))
	}
	res.AvgLogprob = res.SumLogprob / float64(len(res.Tokens)+1)
	return res, nil
}

// promptSteps adds to a chain (add) the steps that feed a window's n
// initial tokens (written at token slot 0): the prompt up to
// <|startoftranscript|> (sotIndex), PassTrackStart on its logits (the
// track reset, limit and end timestamp, and the no-speech
// log-probability), then the rest of the prompt. It returns the number
// of steps added up to PassTrackStart's, inclusive.
func promptSteps(add func(pass int, v plan.Vars), n, sotIndex, limit int, endTs int32) int {
	prompt := func(lo, hi int) {
		pass := PassPrompt
		if hi-lo == 1 {
			pass = PassStep
		}
		add(pass, plan.Vars{plan.VarPos: int64(lo), plan.VarNTok: int64(hi - lo), plan.VarKVLen: int64(hi), plan.VarSlot: int64(lo)})
	}
	prompt(0, sotIndex+1)
	add(PassTrackStart, plan.Vars{plan.VarUser0: int64(limit), plan.VarUser1: int64(max(endTs, 0))})
	if n > sotIndex+1 {
		prompt(sotIndex+1, n)
	}
	return 2
}

// DefaultBeamChainSteps is DefaultChainTokens for a beam search: its
// steps between two looks by the host (deviceBeams). A beam step is 3
// steps of the chain (copy, batched decode, ranking), so 40 fill one
// batch of the CUDA backend's 128 (the prompt goes before, plan.ChainIO's
// Lead), and a jfk search (~37 steps) is one look: 0.064 waits a token
// (0.045 on a long-form window), where main read back every 8 steps and
// then every step once a sequence had finished (0.457 and 0.174) at the
// same speed (1.497 ms a token on jfk, main 1.495; 1.186 on the long-form
// window, main 1.195). The steps past the search's end halt (the beam
// state's status is the chain's halt word): ~95 µs a step on the H200
// (its ~100 launches) instead of a beam step's ~1.3 ms.
const DefaultBeamChainSteps = 40

// chainTokens is how many tokens (steps) a chain runs between two
// read-backs: opt.ChainTokens, or else def where a read is part of a
// chunk's wait and 1 elsewhere.
func (m *Model) chainTokens(opt DecodeOptions, def int) int {
	if opt.ChainTokens > 0 {
		return opt.ChainTokens
	}
	if _, ok := m.exec.(plan.IOChainer); ok {
		return def
	}
	return 1
}

// appendI32 appends v's little-endian words to dst.
func appendI32(dst []byte, v []int32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(x))
	}
	return dst
}

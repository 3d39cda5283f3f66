package whisper

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// deviceBeams steps a window's beams on the backend and reads back only
// their candidates: a step is one chain (plan.RunChainIO) of PassBeamCopy
// (the beams re-selected by the last ranking, when any moved), PassBeams
// and PassBeamTop, with the beams' sampled tokens written before it and
// the candidates (a few words a beam) read behind it. On a GPU that is
// one wait a step, where reading each beam's logits row took several and
// 200 KB a beam.
type deviceBeams struct {
	m      *Model
	f      *logitFilter
	base   int // the prompt's length: every beam shares positions before it
	pos    int // position of the next token fed
	nb     int
	feed   []int32
	hist   []byte
	top    []byte
	passes []int
	vars   []plan.Vars
}

// deviceBeams prepares a window's beam steps: the filter table and the
// candidates' Sample settings (argmax, the top candidates' log-
// probabilities), the prompt's logits left on the backend by
// promptWindow.
func (m *Model) deviceBeams(f *logitFilter, pos, nb int) (*deviceBeams, error) {
	if err := m.setFilter(f); err != nil {
		return nil, err
	}
	set := plan.SampleSettings{Temp: 0, TopP: 1, Logprobs: true, Top: nb + 1}
	w := make([]uint32, plan.SampleSettingsWords)
	set.Encode(w)
	b := make([]byte, 0, 4*len(w))
	for _, v := range w {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if err := m.exec.Write(m.lay.topSet, 0, b); err != nil {
		return nil, err
	}
	return &deviceBeams{m: m, f: f, base: pos, pos: pos, nb: nb, feed: make([]int32, m.lay.beams)}, nil
}

func (s *deviceBeams) next(beams [][]int32, src []int, feed []int32, k int) ([]int32, []float32, error) {
	m := s.m
	nv, ctx := m.H.NVocab, m.H.NTextCtx
	if len(beams) != s.nb || k > plan.SampleMaxTop {
		return nil, nil, fmt.Errorf("whisper: cannot rank %d beams' %d candidates (%d beams, at most %d candidates)", len(beams), k, s.nb, plan.SampleMaxTop)
	}
	count := len(beams[0])
	if count > ctx {
		return nil, nil, fmt.Errorf("whisper: %d sampled tokens, context %d", count, ctx)
	}
	var fv plan.Vars
	s.f.setFilterVars(&fv, nv, count)
	s.passes, s.vars = s.passes[:0], s.vars[:0]
	rows := 1
	if src == nil {
		pass := PassBeamTopFirst
		if !s.f.timestamps {
			pass = PassBeamTopFirstText
		}
		s.passes, s.vars = append(s.passes, pass), append(s.vars, fv)
	} else {
		rows = s.nb
		if len(src) != s.nb || len(feed) != s.nb {
			return nil, nil, fmt.Errorf("whisper: %d beam sources and %d tokens for %d beams", len(src), len(feed), s.nb)
		}
		moved, err := m.writeBeamSrc(src)
		if err != nil {
			return nil, nil, err
		}
		if moved && s.pos > s.base {
			s.passes = append(s.passes, PassBeamCopy)
			s.vars = append(s.vars, plan.Vars{plan.VarPos: int64(s.base), plan.VarNTok: int64(s.pos - s.base)})
		}
		if s.pos >= ctx {
			return nil, nil, fmt.Errorf("whisper: cannot feed the beams at position %d (context %d)", s.pos, ctx)
		}
		copy(s.feed, feed)
		if err := m.writeTokens(s.feed); err != nil {
			return nil, nil, err
		}
		s.passes = append(s.passes, PassBeams)
		s.vars = append(s.vars, plan.Vars{plan.VarPos: int64(s.pos), plan.VarNTok: 1, plan.VarKVLen: int64(s.pos + 1)})
		s.pos++
		pass := PassBeamTop
		if !s.f.timestamps {
			pass = PassBeamTopText
		}
		s.passes, s.vars = append(s.passes, pass), append(s.vars, fv)
	}
	// The beams' sampled tokens, row b of sampled (the filters' history).
	s.hist = s.hist[:0]
	if count > 0 {
		for b, seq := range beams {
			if len(seq) != count {
				return nil, nil, fmt.Errorf("whisper: beam %d has %d tokens, beam 0 %d", b, len(seq), count)
			}
			for _, t := range seq {
				s.hist = binary.LittleEndian.AppendUint32(s.hist, uint32(t))
			}
			if b+1 < len(beams) {
				s.hist = append(s.hist, make([]byte, 4*(ctx-count))...)
			}
		}
	}
	words := rows * plan.SampleLogprobWords
	if cap(s.top) < 4*words {
		s.top = make([]byte, 4*s.nb*plan.SampleLogprobWords)
	}
	s.top = s.top[:4*words]
	io := plan.ChainIO{In: m.lay.sampled, Src: s.hist, Out: m.lay.beamTop, Dst: s.top}
	if _, err := plan.RunChainIO(m.exec, s.passes, s.vars, len(s.passes), &io, func(int) bool { return true }); err != nil {
		return nil, nil, err
	}
	toks, lps := make([]int32, s.nb*k), make([]float32, s.nb*k)
	rec := make([]float32, plan.SampleLogprobWords)
	for b := range s.nb {
		r := b
		if rows == 1 {
			r = 0 // the prompt's candidates are every beam's
		}
		for i := range rec {
			rec[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.top[4*(r*plan.SampleLogprobWords+i):]))
		}
		readTop(rec, toks[b*k:(b+1)*k], lps[b*k:(b+1)*k])
	}
	return toks, lps, nil
}

package whisper

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// selection adds PassSelect and PassSelectText: the logit filters
// (plan.WhisperFilter) and greedy selection (plan.Argmax) of a decoder
// step run on the backend, after PassPrompt or PassStep left the logits
// there, so a greedy step needs no host work between the model and the
// chosen token; and PassFilterBeams(Text), the filters of every beam
// (beam search chooses on the host).
func (b *builder) selection(lay *layout, beams int) {
	h := b.h
	nv := h.NVocab
	lay.filter = b.p.AddBuffer(plan.Buffer{Name: "filter.table", Kind: plan.IO, Size: int64(2*nv) * 4})
	lay.sampled = b.p.AddBuffer(plan.Buffer{Name: "sampled", Kind: plan.IO, Size: int64(beams*h.NTextCtx) * 4})
	lay.choice = b.p.AddBuffer(plan.Buffer{Name: "choice", Kind: plan.IO, Size: int64(beams) * 4})
	sp, err := SpecialsFor(nv)
	if err != nil {
		b.fail("%v", err)
		return
	}
	for _, ts := range []bool{true, false} {
		name := "select"
		if !ts {
			name = "select text"
		}
		ps, _ := b.p.AddPass(name)
		ps.Add(filterDispatch(sp, ts, nv, 1, at(lay.logits, 0), at(lay.filter, 0), at(lay.sampled, 0), h.NTextCtx))
		ps.Add(plan.ArgmaxArgs{X: at(lay.logits, 0), Out: at(lay.choice, 0), N: nv, M: 1, Ldx: nv}.Dispatch())
	}
	for _, ts := range []bool{true, false} {
		name := "filter beams"
		if !ts {
			name = "filter beams text"
		}
		ps, _ := b.p.AddPass(name)
		ps.Add(filterDispatch(sp, ts, nv, beams, at(lay.logits, 0), at(lay.filter, 0), at(lay.sampled, 0), h.NTextCtx))
	}
}

// setFilter writes f's table for the selection passes.
func (m *Model) setFilter(f *logitFilter) error {
	t, err := f.table(m.H.NVocab)
	if err != nil {
		return err
	}
	return m.writeF32(m.lay.filter, 0, t)
}

// selectGreedy filters the logits of the last Prompt (or feed) of
// sequence 0 in place on the backend and chooses the likeliest token;
// sampled are the tokens sampled so far in the window, sampled[:len-1]
// already on the backend (written by earlier calls). It returns the
// filtered logits (the slice is reused by the next call) and the token.
func (m *Model) selectGreedy(f *logitFilter, sampled []int32) ([]float32, int32, error) {
	nv := m.H.NVocab
	if n := len(sampled); n > 0 {
		if n > m.H.NTextCtx {
			return nil, 0, fmt.Errorf("whisper: %d sampled tokens, context %d", n, m.H.NTextCtx)
		}
		if err := plan.WriteI32(m.exec, m.lay.sampled, n-1, sampled[n-1:]); err != nil {
			return nil, 0, err
		}
	}
	m.vars = plan.Vars{}
	f.setFilterVars(&m.vars, nv, len(sampled))
	pass := PassSelect
	if !f.timestamps {
		pass = PassSelectText
	}
	if err := m.exec.Run(pass, &m.vars); err != nil {
		return nil, 0, err
	}
	var tok [1]int32
	if err := plan.ReadI32(m.exec, m.lay.choice, 0, tok[:]); err != nil {
		return nil, 0, err
	}
	out := m.logits[:nv]
	return out, tok[0], m.readF32(m.lay.logits, 0, out)
}

// filterBeams filters the beams' logits rows ([beam][n_vocab], len(beams)
// of them, every beam as long as the others) in place on the backend.
// The first step of a window writes f's table and the rows (the prompt's
// logits copied to every beam); later steps' rows are PassBeams' output,
// already there.
func (m *Model) filterBeams(f *logitFilter, rows []float32, beams [][]int32, first bool) error {
	nv, ctx, nb := m.H.NVocab, m.H.NTextCtx, len(beams)
	if nb == 0 || nb > m.lay.beams || len(rows) != nb*nv {
		return fmt.Errorf("whisper: cannot filter %d beams (%d logits; the plan has %d beams)", nb, len(rows), m.lay.beams)
	}
	if first {
		if err := m.setFilter(f); err != nil {
			return err
		}
		if err := m.writeF32(m.lay.logits, 0, rows); err != nil {
			return err
		}
	}
	count := len(beams[0])
	if count > ctx {
		return fmt.Errorf("whisper: %d sampled tokens, context %d", count, ctx)
	}
	if count > 0 {
		n := (nb-1)*ctx + count
		if cap(m.hist) < n {
			m.hist = make([]int32, nb*ctx)
		}
		hist := m.hist[:n]
		for b, s := range beams {
			if len(s) != count {
				return fmt.Errorf("whisper: beam %d has %d tokens, beam 0 %d", b, len(s), count)
			}
			copy(hist[b*ctx:], s)
		}
		if err := plan.WriteI32(m.exec, m.lay.sampled, 0, hist); err != nil {
			return err
		}
	}
	m.vars = plan.Vars{}
	f.setFilterVars(&m.vars, nv, count)
	pass := PassFilterBeams
	if !f.timestamps {
		pass = PassFilterBeamsText
	}
	if err := m.exec.Run(pass, &m.vars); err != nil {
		return err
	}
	return m.readF32(m.lay.logits, 0, rows)
}

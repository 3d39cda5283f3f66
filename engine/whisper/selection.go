package whisper

import (
	"fmt"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// selection adds the passes that choose on the backend: PassSelect and
// PassSelectText, one greedy step of a chained window (the logit filters,
// plan.WhisperFilter, on the logits PassPrompt or PassStep left there;
// plan.Argmax; plan.WhisperTrack, which records the token's
// log-probability, applies the stop rules and writes the token where the
// next PassStep embeds it), PassTrackStart, which opens a window's track;
// and PassFilterBeams(Text), the filters of every beam (beam search
// chooses on the host).
func (b *builder) selection(lay *layout, beams int) {
	h := b.h
	nv, ctx := h.NVocab, h.NTextCtx
	lay.filter = b.p.AddBuffer(plan.Buffer{Name: "filter.table", Kind: plan.IO, Size: int64(2*nv) * 4})
	lay.sampled = b.p.AddBuffer(plan.Buffer{Name: "sampled", Kind: plan.IO, Size: int64(beams*ctx) * 4})
	lay.choice = b.p.AddBuffer(plan.Buffer{Name: "choice", Kind: plan.IO, Size: int64(beams) * 4})
	lay.track = b.p.AddBuffer(plan.Buffer{Name: "track", Kind: plan.IO, Size: int64(plan.TrackHeader+2*ctx) * 4})
	sp, err := SpecialsFor(nv)
	if err != nil {
		b.fail("%v", err)
		return
	}
	track := plan.WhisperTrackArgs{X: at(lay.logits, 0), Choice: at(lay.choice, 0), Track: at(lay.track, 0), Next: at(lay.tokens, 0),
		N: nv, Cap: ctx, EOT: int(sp.EOT), TsBegin: int(sp.TimestampBegin), Token: int(sp.NoSpeech),
		RepUnit: maxRepeatUnit, RepMin: minRepeats, RepSpan: minRepeatSpan}
	for _, ts := range []bool{true, false} {
		name := "select"
		if !ts {
			name = "select text"
		}
		ps, _ := b.p.AddPass(name)
		ps.Add(filterDispatch(sp, ts, nv, 1, at(lay.logits, 0), at(lay.filter, 0), at(lay.track, plan.TrackHeader), ctx))
		ps.Add(plan.ArgmaxArgs{X: at(lay.logits, 0), Out: at(lay.choice, 0), N: nv, M: 1, Ldx: nv}.Dispatch())
		d := track.Dispatch()
		d.AddPatch(plan.PatchWhisperTrackCount, plan.VarUser0, 1, 0)
		ps.Add(d)
	}
	for _, ts := range []bool{true, false} {
		name := "filter beams"
		if !ts {
			name = "filter beams text"
		}
		ps, _ := b.p.AddPass(name)
		ps.Add(filterDispatch(sp, ts, nv, beams, at(lay.logits, 0), at(lay.filter, 0), at(lay.sampled, 0), ctx))
	}
	ps, _ := b.p.AddPass("track start")
	start := track
	start.Choice, start.Next, start.Flags = none, none, plan.FlagTrackStart
	d := start.Dispatch()
	d.AddPatch(plan.PatchWhisperTrackLimit, plan.VarUser0, 1, 0)
	d.AddPatch(plan.PatchWhisperTrackEndTs, plan.VarUser1, 1, 0)
	ps.Add(d)
}

// setFilter writes f's table for the selection passes, unless the
// backend holds it already (the windows of a transcription share one
// filter: a window then costs no upload for it).
func (m *Model) setFilter(f *logitFilter) error {
	t, err := f.table(m.H.NVocab)
	if err != nil {
		return err
	}
	if slices.Equal(t, m.table) {
		return nil
	}
	m.table = nil
	if err := m.writeF32(m.lay.filter, 0, t); err != nil {
		return err
	}
	m.table = t
	return nil
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

package whisper

import (
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// selection adds the passes that choose on the backend: PassSelect and
// PassSelectText, one greedy step of a chained window (the logit filters,
// plan.WhisperFilter, on the logits PassPrompt or PassStep left there;
// plan.Argmax; plan.WhisperTrack, which records the token's
// log-probability, applies the stop rules and writes the token where the
// next PassStep embeds it), PassTrackStart, which opens a window's track;
// and PassBeamTop(Text) and PassBeamTopFirst(Text), a beam search step's
// candidates: the filters of every beam, then each beam's likeliest tokens
// and their log-probabilities (plan.Sample at temperature 0 with its
// logprobs record), so the host reads a few words a beam instead of its
// logits row (it ranks the candidates: beam.go).
func (b *builder) selection(lay *layout, beams int) {
	h := b.h
	nv, ctx := h.NVocab, h.NTextCtx
	lay.filter = b.p.AddBuffer(plan.Buffer{Name: "filter.table", Kind: plan.IO, Size: int64(2*nv) * 4})
	lay.sampled = b.p.AddBuffer(plan.Buffer{Name: "sampled", Kind: plan.IO, Size: int64(beams*ctx) * 4})
	lay.choice = b.p.AddBuffer(plan.Buffer{Name: "choice", Kind: plan.IO, Size: int64(beams) * 4})
	lay.track = b.p.AddBuffer(plan.Buffer{Name: "track", Kind: plan.IO, Size: int64(plan.TrackHeader+2*ctx) * 4})
	lay.beamTop = b.p.AddBuffer(plan.Buffer{Name: "beam top", Kind: plan.IO, Size: int64(beams*plan.SampleLogprobWords) * 4})
	lay.topSet = b.p.AddBuffer(plan.Buffer{Name: "beam top settings", Kind: plan.IO, Size: plan.SampleSettingsWords * 4})
	lay.beamFin = 2 * beams // patience up to 2
	lay.beamState = b.p.AddBuffer(plan.Buffer{Name: "beam state", Kind: plan.IO, Size: int64(plan.BeamsStateWords(beams, lay.beamFin, ctx)) * 4})
	scr := b.scratch("beam top scratch", 2*nv)
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
	if beams > plan.BeamsMax {
		b.fail("whisper: %d beams, at most %d", beams, plan.BeamsMax)
		return
	}
	beamTop := func(name string, rows int) {
		for _, ts := range []bool{true, false} {
			if !ts {
				name += " text"
			}
			ps, _ := b.p.AddPass(name)
			ps.Add(filterDispatch(sp, ts, nv, rows, at(lay.logits, 0), at(lay.filter, 0), at(lay.sampled, 0), ctx))
			for r := range rows {
				ps.Add(plan.SampleArgs{Draws: plan.None, X: at(lay.logits, r*nv), Out: at(lay.choice, r), Settings: at(lay.topSet, 0),
					Counts: none, Scratch: at(scr, 0), Logprobs: at(lay.beamTop, r*plan.SampleLogprobWords), N: nv}.Dispatch())
			}
			ldt := plan.SampleLogprobWords
			if rows == 1 {
				ldt = 0
			}
			ps.Add(plan.WhisperBeamsArgs{Top: at(lay.beamTop, 0), Hist: at(lay.sampled, 0), State: at(lay.beamState, 0),
				Src: at(lay.beamSrc, 0), Next: at(lay.tokens, 0), Beams: beams, Cap: ctx, Fin: lay.beamFin, Ldt: ldt, EOT: int(sp.EOT)}.Dispatch())
		}
	}
	beamTop("beam top", beams)
	ps, _ := b.p.AddPass("track start")
	start := track
	start.Choice, start.Next, start.Flags = none, none, plan.FlagTrackStart
	d := start.Dispatch()
	d.AddPatch(plan.PatchWhisperTrackLimit, plan.VarUser0, 1, 0)
	d.AddPatch(plan.PatchWhisperTrackEndTs, plan.VarUser1, 1, 0)
	ps.Add(d)
	beamTop("beam top first", 1)
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

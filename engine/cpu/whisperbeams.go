package cpu

import "github.com/harkapp/hark/engine/plan"

// whisperBeams (plan.WhisperBeamsArgs): one beam-search step ranked on
// the calling goroutine (a few dozen candidates). The ranking is
// plan.BeamsStep, which Whisper's host beam search shares.
func (e *Exec) whisperBeams(d *plan.Dispatch) error {
	a := plan.DecodeWhisperBeams(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	rows := 1
	if a.Ldt > 0 {
		rows = a.Beams
	}
	top, err := e.f32(d, plan.SlotWhisperBeamsTop, (rows-1)*a.Ldt+plan.SampleLogprobWords)
	if err != nil {
		return err
	}
	io := plan.BeamsIO{Top: top, Ldt: a.Ldt, CapTok: a.Cap, Fin: a.Fin, EOT: int32(a.EOT)}
	for _, s := range []struct {
		slot, n int
		dst     *[]int32
	}{
		{plan.SlotWhisperBeamsHist, a.Beams * a.Cap, &io.Hist},
		{plan.SlotWhisperBeamsState, plan.BeamsStateWords(a.Beams, a.Fin, a.Cap), &io.St},
		{plan.SlotWhisperBeamsSrc, a.Beams, &io.Src},
		{plan.SlotWhisperBeamsNext, a.Beams, &io.Next},
	} {
		if *s.dst, err = typedSlice[int32](e, d, s.slot, s.n); err != nil {
			return err
		}
		if *s.dst == nil {
			return e.req(s.slot, false)
		}
	}
	if top == nil {
		return e.req(plan.SlotWhisperBeamsTop, false)
	}
	plan.BeamsStep(&io)
	return nil
}

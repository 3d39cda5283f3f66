package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// whisperTrack (plan.WhisperTrackArgs): one step of a Whisper window's
// state, on the calling goroutine (one row) but for its log-sum-exp, the
// host decoder's (plan.LogSumExp) by blocks on the pool. The repetition
// guard is the host's too (plan.RepeatCut), so a window decoded through
// this kernel keeps the host's tokens and log-probabilities bit for bit.
func (e *Exec) whisperTrack(d *plan.Dispatch) error {
	a := plan.DecodeWhisperTrack(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	x, err := e.f32(d, plan.SlotWhisperTrackX, a.N)
	if err != nil {
		return err
	}
	tr, err := typedSlice[int32](e, d, plan.SlotWhisperTrackTrack, plan.TrackHeader+2*a.Cap)
	if err != nil {
		return err
	}
	st := tr[:plan.TrackHeader]
	toks := tr[plan.TrackHeader : plan.TrackHeader+a.Cap]
	lps := tr[plan.TrackHeader+a.Cap:]
	memo, ok := e.memoFor(x)
	e.memo = rowMemo{}
	logprob := func(tok int32) int32 {
		lse := memo.lse // the filter's, of this row
		if !ok {
			lse = e.logSumExp(x)
		}
		return int32(math.Float32bits(x[tok] - lse))
	}
	if a.Flags&plan.FlagTrackStart != 0 {
		clear(st)
		st[plan.TrackNoSpeech] = logprob(int32(a.Token))
		st[plan.TrackLimit], st[plan.TrackEndTs] = int32(a.Limit), int32(a.EndTs)
		return nil
	}
	if st[plan.TrackStatus] != plan.TrackRunning {
		return nil
	}
	count := a.Count
	if count >= a.Cap {
		st[plan.TrackStatus] = plan.TrackLimitReached
		return nil
	}
	choice, err := typedSlice[int32](e, d, plan.SlotWhisperTrackChoice, 1)
	if err != nil {
		return err
	}
	tok := choice[0]
	if tok < 0 || int(tok) >= a.N {
		return e.errf("whisper_track: chosen token %d outside a vocabulary of %d", tok, a.N)
	}
	lps[count] = logprob(tok)
	st[plan.TrackSteps] = int32(count + 1)
	if int(tok) == a.EOT {
		st[plan.TrackStatus] = plan.TrackEOT
		return nil
	}
	toks[count] = tok
	st[plan.TrackKept] = int32(count + 1)
	next, err := typedSlice[int32](e, d, plan.SlotWhisperTrackNext, 1)
	if err != nil {
		return err
	}
	if next != nil {
		next[0] = tok
	}
	if cut := plan.RepeatCut(toks[:count+1], int32(a.TsBegin), a.RepUnit, a.RepMin, a.RepSpan); cut >= 0 {
		st[plan.TrackStatus], st[plan.TrackKept] = plan.TrackRepeated, int32(cut)
	} else if end := st[plan.TrackEndTs]; end > 0 && tok >= end {
		st[plan.TrackStatus] = plan.TrackEndTimestamp
	} else if count+1 >= int(st[plan.TrackLimit]) {
		st[plan.TrackStatus] = plan.TrackLimitReached
	}
	return nil
}

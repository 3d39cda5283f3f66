package whisper

import (
	"fmt"
	"math"
)

// ForcedTolerance bounds how far a backend may stray from a reference
// backend on a teacher-forced decode (CompareForced).
type ForcedTolerance struct {
	// NearTie: where the two backends' top tokens differ, the reference's
	// own margin between them (filtered logits) must be below this: a
	// near-tie, which rounding may flip either way.
	NearTie float32
	// Logprob bounds the difference of the forced tokens' log-probabilities.
	Logprob float64
	// Logit bounds the difference of the forced tokens' logits, relative
	// to the reference's (its magnitude, at least 1): a log-probability
	// near 0 hides a scaled output, the logit does not.
	Logit float64
}

// NearTie is one step where the backends chose differently within the
// tolerance.
type NearTie struct {
	Window, Step int
	Ref, Got     int32   // the tokens each backend would choose
	Margin       float32 // the reference's logit of Ref minus that of Got
}

// ForcedReport sums up a CompareForced.
type ForcedReport struct {
	Windows, Steps int
	MaxLogprobDiff float64
	MaxLogitDiff   float64 // relative, as ForcedTolerance.Logit
	// Where the maxima are (window and step).
	MaxLogprobAt, MaxLogitAt StepAt
	NearTies                 []NearTie
}

// StepAt names one step of one window.
type StepAt struct{ Window, Step int }

// CompareForced replays every window of a transcription made on ref (its
// OnWindow traces) on both models with the reference's tokens forced
// (ForceDecode), so both see the same history at every step, and checks
// each step: got's top token equals ref's, or ref's margin between the two
// is a near-tie; the forced token's log-probability and logit agree within
// tol. Where the reference decoded greedily, its replay must also
// choose the forced tokens (the replay is the decode it recorded). The
// first violation is the error; near-ties are reported.
func CompareForced(ref, got *Model, windows []WindowTrace, tol ForcedTolerance) (*ForcedReport, error) {
	rep := &ForcedReport{}
	type gotStep struct {
		top    int32
		lp, lg float64
	}
	for wi, w := range windows {
		toks := w.Result.Tokens
		if len(toks) == 0 {
			continue
		}
		steps := make([]gotStep, len(toks))
		if err := got.Encode(w.Mel); err != nil {
			return rep, err
		}
		err := got.ForceDecode(w.Options, toks, func(i int, l []float32) error {
			steps[i] = gotStep{argmax(l), float64(logSoftmaxAt(l, toks[i])), float64(l[toks[i]])}
			return nil
		})
		if err != nil {
			return rep, err
		}
		if err := ref.Encode(w.Mel); err != nil {
			return rep, err
		}
		greedy := w.Options.Temperature == 0 && w.Options.BeamSize <= 1
		err = ref.ForceDecode(w.Options, toks, func(i int, l []float32) error {
			rt, g := argmax(l), steps[i]
			// where is only formatted for an error: this runs for every step.
			where := func() string {
				return fmt.Sprintf("window %d (seek %d, temperature %.1f) step %d (forced %d)", wi, w.Seek, w.Options.Temperature, i, toks[i])
			}
			if greedy && rt != toks[i] {
				return fmt.Errorf("%s: the reference's replay chooses %d: the replay is not the recorded decode", where(), rt)
			}
			lp := float64(logSoftmaxAt(l, toks[i]))
			d := math.Abs(lp - g.lp)
			if !(d <= tol.Logprob) { // NaN fails too
				return fmt.Errorf("%s: log-prob %.5f, reference %.5f: differs by more than %g", where(), g.lp, lp, tol.Logprob)
			}
			if d > rep.MaxLogprobDiff {
				rep.MaxLogprobDiff, rep.MaxLogprobAt = d, StepAt{wi, i}
			}
			lg := float64(l[toks[i]])
			if d := math.Abs(lg-g.lg) / max(1, math.Abs(lg)); !(d <= tol.Logit) {
				return fmt.Errorf("%s: logit %.5f, reference %.5f: differs by more than %g of it", where(), g.lg, lg, tol.Logit)
			} else if d > rep.MaxLogitDiff {
				rep.MaxLogitDiff, rep.MaxLogitAt = d, StepAt{wi, i}
			}
			if g.top != rt {
				margin := l[rt] - l[g.top]
				if !(margin < tol.NearTie) {
					return fmt.Errorf("%s: chooses %d, the reference %d by a margin of %.4f (near-tie bound %g)", where(), g.top, rt, margin, tol.NearTie)
				}
				rep.NearTies = append(rep.NearTies, NearTie{Window: wi, Step: i, Ref: rt, Got: g.top, Margin: margin})
			}
			rep.Steps++
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Windows++
	}
	return rep, nil
}

package whisper

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

var negInf = float32(math.Inf(-1))

// logitFilter mirrors the reference decoder's rules, applied to one
// sequence's logits before a token is chosen. seq holds the tokens sampled
// so far in this window (after the initial prompt).
type logitFilter struct {
	sp             Specials
	bias           map[int32]float32
	suppressBlank  []int32 // suppressed at the first sampled position
	suppress       []int32 // suppressed everywhere
	timestamps     bool
	maxInitialTsIx int // -1 = no limit
}

func (f *logitFilter) apply(logits []float32, seq []int32) {
	for t, b := range f.bias {
		if t >= 0 && int(t) < len(logits) {
			logits[t] += b
		}
	}
	if len(seq) == 0 {
		for _, t := range f.suppressBlank {
			logits[t] = negInf
		}
	}
	for _, t := range f.suppress {
		logits[t] = negInf
	}
	if f.timestamps {
		f.applyTimestampRules(logits, seq)
	}
}

// applyTimestampRules keeps timestamps paired and increasing, forces a
// timestamp first, and prefers a timestamp when their total probability
// beats every text token, as the reference decoder does.
func (f *logitFilter) applyTimestampRules(logits []float32, seq []int32) {
	tb := f.sp.TimestampBegin
	eot := f.sp.EOT
	logits[f.sp.NoTimestamps] = negInf

	n := len(seq)
	lastWasTs := n >= 1 && seq[n-1] >= tb
	penultimateWasTs := n < 2 || seq[n-2] >= tb
	if lastWasTs {
		if penultimateWasTs { // a pair is closed: text must follow
			fill(logits[tb:], negInf)
		} else { // an open timestamp: text cannot follow directly
			fill(logits[:eot], negInf)
		}
	}

	// Timestamps must not decrease; a segment must not be empty.
	lastTs := int32(-1)
	for i := n - 1; i >= 0; i-- {
		if seq[i] >= tb {
			lastTs = seq[i]
			break
		}
	}
	if lastTs >= 0 {
		upto := lastTs
		if !(lastWasTs && !penultimateWasTs) {
			upto++
		}
		fill(logits[tb:upto], negInf)
	}

	if n == 0 {
		fill(logits[:tb], negInf)
		if f.maxInitialTsIx >= 0 {
			last := int(tb) + f.maxInitialTsIx
			if last+1 < len(logits) {
				fill(logits[last+1:], negInf)
			}
		}
	}

	// If the timestamps together are likelier than any text token, sample
	// a timestamp.
	lse := logSumExp(logits)
	tsMass := logSumExp(logits[tb:]) - lse
	maxText := negInf
	for _, v := range logits[:tb] {
		maxText = max(maxText, v)
	}
	if tsMass > maxText-lse {
		fill(logits[:tb], negInf)
	}
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// logSumExp is plan.LogSumExp (float64 sums; −Inf when every entry is
// −Inf), which the CPU's WhisperFilter uses too.
func logSumExp(s []float32) float32 { return plan.LogSumExp(s) }

// logSoftmaxAt is log(softmax(logits)[i]).
func logSoftmaxAt(logits []float32, i int32) float32 { return logits[i] - logSumExp(logits) }

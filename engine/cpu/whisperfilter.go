package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// whisperFilter (plan.WhisperFilterArgs). Rows are few (one per sequence)
// and each is a handful of passes over the vocabulary, so it runs on the
// calling goroutine. Its log-sum-exp is the Whisper host filter's
// (plan.LogSumExp), so the timestamp decision is the host's bit for bit.
func (e *Exec) whisperFilter(d *plan.Dispatch) error {
	a := plan.DecodeWhisperFilter(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	n, m, ldx, count := a.N, a.M, a.Ldx, a.Count
	if m == 0 || n == 0 {
		return nil
	}
	x, err := e.f32(d, plan.SlotWhisperFilterX, extent(m, ldx, n))
	if err != nil {
		return err
	}
	table, err := e.f32(d, plan.SlotWhisperFilterTable, 2*n)
	if err != nil {
		return err
	}
	ts := a.Flags&plan.FlagTimestamps != 0
	var hist []int32
	if ts && count > 0 {
		if hist, err = typedSlice[int32](e, d, plan.SlotWhisperFilterHist, extent(m, a.Ldh, count)); err != nil {
			return err
		}
	}
	for t := range m {
		row := x[t*ldx : t*ldx+n]
		for j, b := range table[:n] {
			row[j] += b
		}
		if count == 0 {
			for j, b := range table[n:] {
				row[j] += b
			}
		}
		if ts {
			var seq []int32
			if count > 0 {
				seq = hist[t*a.Ldh : t*a.Ldh+count]
			}
			filterTimestamps(row, seq, &a)
		}
	}
	return nil
}

// filterTimestamps applies the timestamp rules of plan.WhisperFilter to
// one row whose sequence so far is seq.
func filterTimestamps(x []float32, seq []int32, a *plan.WhisperFilterArgs) {
	inf := float32(math.Inf(-1))
	tb, eot, n := a.TsBegin, a.EOT, len(x)
	fill := func(lo, hi int) {
		for j := max(lo, 0); j < min(hi, n); j++ {
			x[j] = inf
		}
	}
	x[a.NoTs] = inf
	c := len(seq)
	lastTs := c >= 1 && int(seq[c-1]) >= tb
	penultTs := c < 2 || int(seq[c-2]) >= tb
	if lastTs {
		if penultTs {
			fill(tb, n)
		} else {
			fill(0, eot)
		}
	}
	for i := c - 1; i >= 0; i-- {
		if l := int(seq[i]); l >= tb {
			if !lastTs || penultTs {
				l++
			}
			fill(tb, l)
			break
		}
	}
	if c == 0 {
		fill(0, tb)
		if a.MaxInitial < n {
			fill(tb+a.MaxInitial+1, n)
		}
	}
	lse := plan.LogSumExp(x)
	tsMass := plan.LogSumExp(x[tb:]) - lse
	maxText := plan.MaxF32(x[:tb])
	if tsMass > maxText-lse {
		fill(0, tb)
	}
}

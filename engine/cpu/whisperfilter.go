package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// whisperFilter (plan.WhisperFilterArgs). Rows are few (one per sequence)
// and each is a handful of passes over the vocabulary: they run on the
// pool by blocks (rowreduce.go), the rules between them on the calling
// goroutine. Its log-sum-exp is the Whisper host filter's
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
	// the suppressions apply at the first position only
	var first []float32
	if count == 0 {
		first = table[n:]
	}
	for t := range m {
		row := x[t*ldx : t*ldx+n]
		if !ts {
			e.prepRow(row, table[:n], first, nil, n)
			continue
		}
		var seq []int32
		if count > 0 {
			seq = hist[t*a.Ldh : t*a.Ldh+count]
		}
		e.rowFills = timestampFills(e.rowFills[:0], seq, &a)
		maxText, maxTs, nan := e.prepRow(row, table[:n], first, e.rowFills, a.TsBegin)
		var lse float32
		arg := -1
		if nan { // NaN's bits: the serial functions'
			lse, maxText = plan.LogSumExp(row), plan.MaxF32(row[:a.TsBegin])
		} else {
			lse, arg = e.logSumExpMax(row, max(maxText, maxTs), m == 1)
		}
		// timestamps likelier together than any text token: a timestamp
		tsMass := plan.LogSumExp(row[a.TsBegin:]) - lse
		if tsMass > maxText-lse {
			inf := float32(math.Inf(-1))
			for j := range row[:a.TsBegin] {
				row[j] = inf
			}
		} else if arg >= 0 {
			e.memo = rowMemo{row: &row[0], n: n, lse: lse, arg: arg}
		}
	}
	return nil
}

// timestampFills appends to dst the ranges [lo, hi) of a row whose sequence
// so far is seq that plan.WhisperFilter's timestamp rules set to −Inf
// before its log-sum-exp.
func timestampFills(dst [][2]int, seq []int32, a *plan.WhisperFilterArgs) [][2]int {
	tb, eot, n := a.TsBegin, a.EOT, a.N
	dst = append(dst, [2]int{a.NoTs, a.NoTs + 1})
	c := len(seq)
	lastTs := c >= 1 && int(seq[c-1]) >= tb
	penultTs := c < 2 || int(seq[c-2]) >= tb
	if lastTs {
		if penultTs {
			dst = append(dst, [2]int{tb, n})
		} else {
			dst = append(dst, [2]int{0, eot})
		}
	}
	for i := c - 1; i >= 0; i-- {
		if l := int(seq[i]); l >= tb {
			if !lastTs || penultTs {
				l++
			}
			dst = append(dst, [2]int{tb, l})
			break
		}
	}
	if c == 0 {
		dst = append(dst, [2]int{0, tb})
		if a.MaxInitial < n {
			dst = append(dst, [2]int{tb + a.MaxInitial + 1, n})
		}
	}
	return dst
}

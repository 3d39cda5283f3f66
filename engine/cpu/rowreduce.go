package cpu

import (
	"math"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
)

// rowReduce spreads one long row's serial passes — a Whisper step's 51,864
// logits: the filters' table additions, maxima and log-sum-exp, the greedy
// argmax — over the pool, a plan.LSEBlock block an item. At 16 threads
// these ran on the caller while 15 workers spun, about a fifth of a
// decoder token. The results are the serial functions' bit for bit:
// maxima and the first index of the largest do not depend on the order,
// and the exponentials are added per block in order, then the blocks in
// order, as plan.LogSumExp does.
type rowReduce struct {
	x     []float32
	phase int

	// rowPrep: x += add[0] (+ add[1]), the fills set to −Inf, then the
	// maxima of x[:split] and x[split:] of each block
	add    [2][]float32
	fills  [][2]int
	split  int
	lo, hi []float32

	m       float32   // rowExp: the row's largest entry
	sums    []float64 // rowExp: each block's exponential sum
	arg     []int     // rowArgmax (rowExp with withArg): each block's first index of its largest
	withArg bool
}

// rowMemo is what WhisperFilter knows of the row it leaves where its last
// rule left it as it was when summed: its log-sum-exp and argmax
// (plan.LogSumExp's and plan.ArgmaxRow's), so that the Argmax and
// WhisperTrack right after it (Whisper's PassSelect) need not pass over
// the row again. Any other dispatch clears it (runPass): only those two
// may come between the filter and its use, and neither writes the row.
type rowMemo struct {
	row *float32
	n   int
	lse float32
	arg int
}

// memoFor is the memo of x, if x is the row it was taken of.
func (e *Exec) memoFor(x []float32) (rowMemo, bool) {
	m := e.memo
	return m, m.row != nil && len(x) == m.n && &x[0] == m.row
}

const (
	rowPrep = iota
	rowExp
	rowArgmax
)

// rowBlocks is how many plan.LSEBlock blocks x spans.
func rowBlocks(x []float32) int { return (len(x) + plan.LSEBlock - 1) / plan.LSEBlock }

// parallelRow: x is long enough that the pool's barrier costs less than
// the serial pass it spreads.
func (e *Exec) parallelRow(x []float32) bool {
	return e.pool.Workers() > 1 && len(x) >= 4*plan.LSEBlock
}

func (r *rowReduce) grow(nb int) {
	if len(r.sums) < nb {
		r.lo, r.hi, r.sums, r.arg = make([]float32, nb), make([]float32, nb), make([]float64, nb), make([]int, nb)
	}
}

func (r *rowReduce) Do(_, lo, hi int) {
	for b := lo; b < hi; b++ {
		s, e := b*plan.LSEBlock, min((b+1)*plan.LSEBlock, len(r.x))
		x := r.x[s:e]
		switch r.phase {
		case rowPrep:
			r.prep(x, s, e)
			c := min(max(r.split-s, 0), len(x))
			r.lo[b], r.hi[b] = plan.MaxF32(x[:c]), plan.MaxF32(x[c:])
		case rowExp:
			r.sums[b] = plan.ExpSum(x, r.m)
			if r.withArg {
				r.arg[b] = s + plan.ArgmaxRow(x)
			}
		case rowArgmax:
			r.arg[b] = s + plan.ArgmaxRow(x)
		}
	}
}

// prep is rowPrep's additions and fills on x = r.x[s:e].
func (r *rowReduce) prep(x []float32, s, e int) {
	for _, t := range r.add {
		if t != nil {
			for j, v := range t[s:e] {
				x[j] += v
			}
		}
	}
	inf := float32(math.Inf(-1))
	for _, f := range r.fills {
		for j := max(f[0], s); j < min(f[1], e); j++ {
			x[j-s] = inf
		}
	}
}

// prepRow adds add0 (and add1, when not nil) to x, sets the ranges fills
// to −Inf, and returns the largest entries of x[:split] and x[split:]
// (plan.MaxF32's) and whether either is NaN, on the pool.
func (e *Exec) prepRow(x, add0, add1 []float32, fills [][2]int, split int) (lo, hi float32, nan bool) {
	r := &e.rowR
	nb := rowBlocks(x)
	r.grow(nb)
	r.x, r.phase, r.add, r.fills, r.split = x, rowPrep, [2][]float32{add0, add1}, fills, split
	e.pool.Run(nb, 1, r)
	r.x, r.add, r.fills = nil, [2][]float32{}, nil
	lo, hi = plan.MaxF32(r.lo[:nb]), plan.MaxF32(r.hi[:nb])
	return lo, hi, math.IsNaN(float64(lo)) || math.IsNaN(float64(hi))
}

// logSumExp is plan.LogSumExp(x) bit for bit, on the pool where x is long.
func (e *Exec) logSumExp(x []float32) float32 {
	if !e.parallelRow(x) {
		return plan.LogSumExp(x)
	}
	lo, hi, nan := e.prepRow(x, nil, nil, nil, len(x))
	if nan {
		return plan.LogSumExp(x)
	}
	lse, _ := e.logSumExpMax(x, max(lo, hi), false)
	return lse
}

// logSumExpMax is plan.LogSumExp(x) given m = plan.MaxF32(x), not NaN,
// and with withArg plan.ArgmaxRow(x) too (else −1).
func (e *Exec) logSumExpMax(x []float32, m float32, withArg bool) (lse float32, arg int) {
	if math.IsInf(float64(m), -1) || !e.parallelRow(x) {
		if withArg {
			return plan.LogSumExp(x), plan.ArgmaxRow(x)
		}
		return plan.LogSumExp(x), -1
	}
	r := &e.rowR
	nb := rowBlocks(x)
	r.grow(nb)
	r.x, r.phase, r.m, r.withArg = x, rowExp, m, withArg
	e.pool.Run(nb, 1, r)
	r.x, r.withArg = nil, false
	var sum float64
	for _, s := range r.sums[:nb] {
		sum += s
	}
	arg = -1
	if withArg {
		arg = firstLargest(x, r.arg[:nb])
	}
	return plan.LogOfSum(m, sum), arg
}

// argmaxRow is plan.ArgmaxRow(x), on the pool where x is long.
func (e *Exec) argmaxRow(x []float32) int {
	if !e.parallelRow(x) {
		return plan.ArgmaxRow(x)
	}
	r := &e.rowR
	nb := rowBlocks(x)
	r.grow(nb)
	r.x, r.phase = x, rowArgmax
	e.pool.Run(nb, 1, r)
	r.x = nil
	return firstLargest(x, r.arg[:nb])
}

// firstLargest is plan.ArgmaxRow(x) from its blocks' (args, in order).
func firstLargest(x []float32, args []int) int {
	best := -1
	var bv float32
	for _, i := range args {
		if v := x[i]; v == v && (best < 0 || v > bv) {
			best, bv = i, v
		}
	}
	return max(best, 0)
}

// overlapF32I32 reports whether a and b share memory (overlaps, for an
// int32 output).
func overlapF32I32(a []float32, b []int32) bool {
	if len(b) == 0 {
		return false
	}
	return overlaps(a, unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)))
}

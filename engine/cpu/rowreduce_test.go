package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/plan"
)

// TestRowReduce holds the pool's block passes over one row to the serial
// functions bit for bit (plan.LogSumExp, plan.MaxF32, plan.ArgmaxRow, the
// additions and fills done in order), and the log-sum-exp to a float64
// reference, at odd lengths on both sides of the parallel threshold and
// at 1, 2, 3 and 5 workers: logit-like rows, with −Inf runs, ties across
// blocks, signed zeros, NaNs and rows of only −Inf.
func TestRowReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 18))
	inf := float32(math.Inf(-1))
	for _, w := range []int{1, 2, 3, 5} {
		e := &Exec{pool: NewPool(w)}
		for _, n := range []int{1, 7, 4*plan.LSEBlock - 1, 4 * plan.LSEBlock, 4*plan.LSEBlock + 3, 20001, 51864, 51865} {
			for trial := range 7 {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(r.NormFloat64()*4 - 3)
				}
				switch trial {
				case 1: // −Inf runs, as the filters leave them
					for i := range x[:n/2] {
						x[i] = inf
					}
				case 2: // the largest value tied in several blocks
					for _, i := range []int{n - 1, n / 2, n / 3} {
						x[i] = 40
					}
				case 3: // zeros of both signs as the largest
					for i := range x {
						x[i] = -float32(math.Abs(float64(x[i])))
					}
					x[n/2], x[n-1] = float32(math.Copysign(0, -1)), 0
				case 4:
					x[r.IntN(n)] = float32(math.NaN())
				case 5:
					for i := range x {
						x[i] = inf
					}
				case 6: // a large range: many terms underflow
					for i := range x {
						x[i] *= 60
					}
				}
				ref := append([]float32(nil), x...)
				if got, want := e.logSumExp(x), plan.LogSumExp(ref); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("logSumExp: %d workers, n %d trial %d: %v, serial %v", w, n, trial, got, want)
				} else if trial != 4 && trial != 5 {
					var s float64
					m := math.Inf(-1)
					for _, v := range ref {
						m = math.Max(m, float64(v))
					}
					for _, v := range ref {
						s += math.Exp(float64(v) - m)
					}
					if f64 := m + math.Log(s); math.Abs(float64(got)-f64) > 1e-5*math.Max(1, math.Abs(f64)) {
						t.Fatalf("logSumExp: %d workers, n %d trial %d: %v, float64 %v", w, n, trial, got, f64)
					}
				}
				if got, want := e.argmaxRow(x), plan.ArgmaxRow(ref); got != want {
					t.Fatalf("argmaxRow: %d workers, n %d trial %d: %d, serial %d", w, n, trial, got, want)
				}

				// prepRow: two tables added, ranges filled, maxima either side of split
				add0, add1 := randVec(r, n, 1), randVec(r, n, 1)
				fills := [][2]int{{n / 5, n/5 + 1}, {-3, n / 7}, {n - n/9, n + 4}}
				split := r.IntN(n + 1)
				for j := range ref {
					ref[j] = (ref[j] + add0[j]) + add1[j]
				}
				for _, f := range fills {
					for j := max(f[0], 0); j < min(f[1], n); j++ {
						ref[j] = inf
					}
				}
				lo, hi, nan := e.prepRow(x, add0, add1, fills, split)
				for j := range ref {
					if math.Float32bits(x[j]) != math.Float32bits(ref[j]) {
						t.Fatalf("prepRow: %d workers, n %d trial %d: x[%d] %v, serial %v", w, n, trial, j, x[j], ref[j])
					}
				}
				wantLo, wantHi := plan.MaxF32(ref[:split]), plan.MaxF32(ref[split:])
				isNaN := func(v float32) bool { return v != v }
				if nan != (isNaN(wantLo) || isNaN(wantHi)) || !nan && (math.Float32bits(lo) != math.Float32bits(wantLo) || math.Float32bits(hi) != math.Float32bits(wantHi)) {
					t.Fatalf("prepRow: %d workers, n %d trial %d split %d: maxima %v %v (NaN %v), serial %v %v", w, n, trial, split, lo, hi, nan, wantLo, wantHi)
				}
				if !nan {
					got, arg := e.logSumExpMax(x, max(lo, hi), true)
					if want := plan.LogSumExp(ref); math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("logSumExpMax: %d workers, n %d trial %d: %v, serial %v", w, n, trial, got, want)
					}
					if want := plan.ArgmaxRow(ref); arg != want {
						t.Fatalf("logSumExpMax: %d workers, n %d trial %d: argmax %d, serial %d", w, n, trial, arg, want)
					}
				}
			}
		}
		e.pool.Close()
	}
}

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestSampleExpFxAsm: the assembly's fixed-point masses are
// plan.SampleExpFx's (float64 math.Exp, the exact integer series near a
// half) bit for bit, at sizes that leave a scalar tail, over logits of
// every spread the sampler sees (peaked, flat, past the −32 cut, −Inf, the
// top itself), and it leaves few lanes to the scalar path.
func TestSampleExpFxAsm(t *testing.T) {
	require.True(t, hasAVX2, "this amd64 machine has no AVX2 and FMA: the assembly is untested")
	r := rand.New(rand.NewPCG(33, 6))
	gens := map[string]func() float32{
		"normal3":  func() float32 { return float32(r.NormFloat64() * 3) },
		"flat0.05": func() float32 { return float32(r.NormFloat64() * 0.05) },
		"wide":     func() float32 { return float32(r.Float64()*80 - 60) },
		"cut":      func() float32 { return float32(-32 + (r.Float64()-0.5)*1e-3) },
		"tiny":     func() float32 { return float32(-r.Float64() * 1e-6) },
	}
	lanes, todo := 0, 0
	for name, g := range gens {
		for _, n := range []int{1, 3, 4, 5, 7, 8, 63, 4097, 49153} {
			l := make([]float32, n)
			for i := range l {
				l[i] = g()
			}
			if n > 5 {
				l[n/2] = float32(math.Inf(-1))
				l[n/3] = 0
			}
			lmax := float32(math.Inf(-1))
			for _, v := range l {
				lmax = max(lmax, v)
			}
			if n > 5 {
				lmax = max(lmax, 0) // the top's own mass, 2^43
			}
			want := make([]uint64, n)
			sampleExpFxsGeneric(want, l, lmax)
			got := make([]uint64, n)
			main := n &^ 3
			if main > 0 {
				k := sampleExpFxAVX2(&got[0], &l[0], main, lmax, sampleExpFxTie)
				lanes, todo = lanes+main, todo+k
				marked := 0
				for _, e := range got[:main] {
					if e == sampleExpFxTodo {
						marked++
					}
				}
				require.Equal(t, k, marked, "%s n=%d: the count of lanes left to the scalar path", name, n)
			}
			clear(got)
			if sampleExpFxsAVX2(got, l, lmax) {
				for i, e := range got[:n] {
					if e == sampleExpFxTodo { // the caller's part
						got[i] = plan.SampleExpFx(l[i] - lmax)
					}
				}
			}
			for i := range want {
				if want[i] != got[i] {
					require.Equal(t, want[i], got[i], fmt.Sprintf("%s n=%d token %d: l %g lmax %g", name, n, i, l[i], lmax))
				}
			}
		}
	}
	// a product is within 0.01 of a half about one time in fifty (the
	// scalar path is ~20 times a lane's cost: at one in ten it was most of
	// a draw)
	require.Less(t, todo*25, lanes, "lanes left to the scalar path: %d of %d", todo, lanes)
	require.Positive(t, todo, "no lane took the scalar path: it went untested")
	t.Logf("%d of %d lanes left to the scalar path", todo, lanes)
}

// TestSampleExpFxSumAsm: the summing assembly (drawIndex's pass) writes
// plan.SampleExpFx's masses bit for bit, every lane exact (the lanes it
// listed filled by its wrapper), and returns their exact sum, over the
// same spreads and sizes as TestSampleExpFxAsm; the lanes it lists are
// exactly those sampleExpFxAVX2 marks.
func TestSampleExpFxSumAsm(t *testing.T) {
	require.True(t, hasAVX2, "this amd64 machine has no AVX2 and FMA: the assembly is untested")
	r := rand.New(rand.NewPCG(33, 7))
	gens := map[string]func() float32{
		"normal3":  func() float32 { return float32(r.NormFloat64() * 3) },
		"flat0.05": func() float32 { return float32(r.NormFloat64() * 0.05) },
		"flat0.3":  func() float32 { return float32(r.NormFloat64() * 0.3 / 0.7) },
		"wide":     func() float32 { return float32(r.Float64()*80 - 60) },
		"cut":      func() float32 { return float32(-32 + (r.Float64()-0.5)*1e-3) },
		"tiny":     func() float32 { return float32(-r.Float64() * 1e-6) },
	}
	listed := 0
	for name, g := range gens {
		for _, n := range []int{1, 3, 4, 5, 7, 8, 63, 4096, 4097, 49152} {
			l := make([]float32, n)
			for i := range l {
				l[i] = g()
			}
			if n > 5 {
				l[n/2] = float32(math.Inf(-1))
				l[n/3] = 0
			}
			lmax := float32(math.Inf(-1))
			for _, v := range l {
				lmax = max(lmax, v)
			}
			if n > 5 {
				lmax = max(lmax, 0)
			}
			want := make([]uint64, n)
			wantSum := sampleExpFxSumGeneric(want, l, lmax, nil)
			var s uint64
			for _, m := range want {
				s += m
			}
			require.Equal(t, s, wantSum, "%s n=%d: the generic sum", name, n)
			got := make([]uint64, n)
			todo := make([]int32, n)
			require.Equal(t, wantSum, sampleExpFxSumAVX2Go(got, l, lmax, todo), "%s n=%d: the sum", name, n)
			for i := range want {
				if want[i] != got[i] {
					require.Equal(t, want[i], got[i], fmt.Sprintf("%s n=%d token %d: l %g lmax %g", name, n, i, l[i], lmax))
				}
			}
			// the listed lanes are the marked ones, in order
			if main := n &^ 3; main > 0 {
				marks := make([]uint64, main)
				k := sampleExpFxAVX2(&marks[0], &l[0], main, lmax, sampleExpFxTie)
				var sum uint64
				clear(got)
				k2 := sampleExpFxSumAVX2(&got[0], &l[0], main, lmax, sampleExpFxTie, &todo[0], &sum)
				require.Equal(t, k, k2, "%s n=%d: lanes left", name, n)
				var marked []int32
				var rounded uint64
				for i, e := range marks {
					if e == sampleExpFxTodo {
						marked = append(marked, int32(i))
					} else {
						rounded += e
					}
				}
				require.Equal(t, marked, append([]int32(nil), todo[:k2]...), "%s n=%d: the listed lanes", name, n)
				require.Equal(t, rounded, sum, "%s n=%d: the rounded lanes' sum", name, n)
				require.Equal(t, marks, got[:main], "%s n=%d: the masses and marks", name, n)
				listed += k2
			}
		}
	}
	require.Positive(t, listed, "no lane took the scalar path: it went untested")
}

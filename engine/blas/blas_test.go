package blas

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CI machine installs OpenBLAS, so a missing library is a failure here,
// not a skip: the fast path must be the one that is tested.
func TestAvailable(t *testing.T) {
	require.True(t, Available(), Library())
}

func TestSgemmMatchesNaive(t *testing.T) {
	require.True(t, Available(), Library())
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		m, n, k int
		ta, tb  bool
		beta    float32
	}{
		{7, 5, 3, false, false, 0}, {33, 17, 65, false, true, 0}, {1, 51, 9, true, false, 1},
		{64, 64, 64, true, true, 0.5}, {3, 1, 1, false, true, 1},
	} {
		ar, ac := tc.m, tc.k
		if tc.ta {
			ar, ac = tc.k, tc.m
		}
		br, bc := tc.k, tc.n
		if tc.tb {
			br, bc = tc.n, tc.k
		}
		lda, ldb, ldc := ac+2, bc+1, tc.n+3
		a := randSlice(r, (ar-1)*lda+ac)
		b := randSlice(r, (br-1)*ldb+bc)
		c := randSlice(r, (tc.m-1)*ldc+tc.n)
		if tc.beta == 0 {
			for i := range c {
				c[i] = float32(math.NaN()) // beta 0 must not read C
			}
		}
		want := make([]float64, len(c))
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				var s float64
				for p := 0; p < tc.k; p++ {
					var av, bv float32
					if tc.ta {
						av = a[p*lda+i]
					} else {
						av = a[i*lda+p]
					}
					if tc.tb {
						bv = b[j*ldb+p]
					} else {
						bv = b[p*ldb+j]
					}
					s += float64(av) * float64(bv)
				}
				s *= 1.5
				if tc.beta != 0 {
					s += float64(tc.beta) * float64(c[i*ldc+j])
				}
				want[i*ldc+j] = s
			}
		}
		require.NoError(t, Sgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, 1.5, a, lda, b, ldb, tc.beta, c, ldc))
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				require.InDelta(t, want[i*ldc+j], c[i*ldc+j], 1e-4*(1+math.Abs(want[i*ldc+j])), "%+v i=%d j=%d", tc, i, j)
			}
		}
	}
}

func TestSgemmRejectsShortSlices(t *testing.T) {
	a := make([]float32, 6)
	require.Error(t, Sgemm(false, false, 2, 3, 3, 1, a, 3, a, 3, 0, make([]float32, 5), 3))
	require.Error(t, Sgemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, make([]float32, 4), 2))
	require.Error(t, Sgemm(false, false, -1, 2, 3, 1, a, 3, a, 3, 0, a, 3))
}

func TestSetThreads(t *testing.T) {
	require.True(t, Available(), Library())
	SetThreads(1)
	require.Equal(t, 1, Threads())
	SetThreads(0)
	require.Positive(t, Threads())
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// purego.SyscallN's go:uintptrescapes moves its variadic argument slice to
// the heap: one small allocation per call, negligible next to a GEMM.
func TestSgemmAllocatesAtMostOnce(t *testing.T) {
	require.True(t, Available(), Library())
	a, b, c := make([]float32, 64*64), make([]float32, 64*64), make([]float32, 64*64)
	run := func() { require.NoError(t, Sgemm(false, true, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64)) }
	run()
	require.LessOrEqual(t, testing.AllocsPerRun(10, run), 1.0)
}

// TestSgemmConcurrentSingleThreaded: with one library thread, goroutines
// may call Sgemm at once (each on its own argument slot); every result
// must match the same product computed alone.
func TestSgemmConcurrentSingleThreaded(t *testing.T) {
	require.True(t, Available(), Library())
	prev := Threads()
	SetThreads(1)
	defer SetThreads(prev)
	r := rand.New(rand.NewPCG(5, 6))
	const g, m, n, k = 8, 37, 29, 41
	a := randSlice(r, m*k)
	bs := make([][]float32, g)
	want := make([][]float32, g)
	for i := range bs {
		bs[i] = randSlice(r, n*k)
		want[i] = make([]float32, m*n)
		require.NoError(t, Sgemm(false, true, m, n, k, 1, a, k, bs[i], k, 0, want[i], n))
	}
	got := make([][]float32, g)
	errs := make(chan error, g)
	var wg sync.WaitGroup
	for i := range got {
		got[i] = make([]float32, m*n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := Sgemm(false, true, m, n, k, 1, a, k, bs[i], k, 0, got[i], n); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i := range got {
		require.Equal(t, want[i], got[i], "goroutine %d", i)
	}
}

// OpenBLAS runs the kernels this CPU's features allow, also where it
// cannot tell the CPU's model (a hypervisor's generic one): the override
// reaches the library (set through the C environment before it loads).
func TestOpenBLASCore(t *testing.T) {
	require.True(t, Available(), Library())
	require.NotZero(t, coreNameFn, "the CI machine's BLAS is OpenBLAS: %s", Library())
	want := os.Getenv("OPENBLAS_CORETYPE") // ours, or the user's
	if want == "" {
		require.Empty(t, openBLASCore())
		t.Logf("no override for this CPU: OpenBLAS chose %s", coreName())
		return
	}
	require.True(t, strings.EqualFold(coreName(), want), "OpenBLAS runs %q, want %q", coreName(), want)
}

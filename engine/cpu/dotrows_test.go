package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// rowsMPath is one instruction-set path of a type's row kernels: for a
// quantized type the single-row run and the multi-row kernel that must
// equal it, for a float type the dot and its multi-row kernel.
type rowsMPath struct {
	rows  func(w []byte, rb int, x []byte, nb int, out []float32)
	m     rowsMFunc
	prep  func(x []byte, nb int, dst []float32)
	prepN int
	dotF  func(w []byte, x []float32) float32
	fm    rowsFMFunc
}

// rowsMPaths are, by type, the paths this CPU runs (the SIMD ones added
// by the architecture's test files).
var rowsMPaths = map[ggml.Type]map[string]rowsMPath{
	ggml.Q8_0: {"generic": {rows: func(w []byte, rb int, x []byte, nb int, out []float32) {
		rowsGeneric(dotQ8_0Generic, w, rb, x, nb, out)
	}, m: rowsMQ8_0Generic, prep: prepScales, prepN: 1}},
	ggml.F16: {"generic": {dotF: dotF16Generic}},
	ggml.F32: {"generic": {dotF: func(w []byte, x []float32) float32 { return dotF32Generic(f32View(w, len(x)), x) }}},
}

// usePath installs p's kernels for t (nil m or fm: the multi-row kernel
// off, one activation row at a time) until the test ends.
func usePath(t *testing.T, typ ggml.Type, p rowsMPath) {
	kd := kinds[typ]
	saved := *kd
	t.Cleanup(func() { *kd = saved })
	if p.rows != nil {
		ts := kd.typeSize
		kd.dotQRows = p.rows
		kd.dotQ = func(w, x []byte, nb int) float32 {
			var o [1]float32
			p.rows(w, nb*ts, x, nb, o[:])
			return o[0]
		}
		kd.dotQRowsM, kd.prepM, kd.prepN = p.m, p.prep, p.prepN
		return
	}
	kd.dotF, kd.dotFM = p.dotF, p.fm
}

// The float multi-row kernels equal their path's dot bit for bit, for
// every group size, lengths with and without a tail past the SIMD width,
// and activation rows further apart than their length.
func TestRowsFMEqualDotF(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 2))
	for typ, paths := range rowsMPaths {
		for name, p := range paths {
			if p.fm == nil {
				continue
			}
			for _, k := range []int{7, 32, 200, 576} {
				w := randWeights(r, typ, 1, k)
				for m := 1; m <= rowsM; m++ {
					ldx := k + 3
					x := randF32(r, (m-1)*ldx+k)
					out := make([]float32, m+1)
					nanFill(out)
					p.fm(w, x, k, ldx, m, out)
					for i := range m {
						require.Equal(t, p.dotF(w, x[i*ldx:i*ldx+k]), out[i], "%s %s k=%d m=%d row %d", typ, name, k, m, i)
					}
					require.True(t, math.IsNaN(float64(out[m])), "past m written")
				}
			}
		}
	}
}

// The multi-row kernels equal their path's single-row kernel bit for bit,
// for every group size, odd row and block counts, and activation and
// output strides wider than the rows.
func TestRowsMEqualRows(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 4))
	for typ, paths := range rowsMPaths {
		ts, xs := kinds[typ].typeSize, kinds[typ].actBytes
		for name, p := range paths {
			if p.m == nil {
				continue
			}
			for _, nb := range []int{1, 7, 18, 2, 36} {
				for _, rows := range []int{1, 5, 37} {
					rb := nb*ts + 3 // rows apart by more than their length
					w := make([]byte, rows*rb)
					packed := randWeights(r, typ, rows, 32*nb)
					for j := range rows {
						copy(w[j*rb:], packed[j*nb*ts:(j+1)*nb*ts])
					}
					for m := 1; m <= rowsM; m++ {
						xrb := nb*xs + 5
						x := make([]byte, m*xrb)
						for i := range m {
							require.NoError(t, ggml.QuantizeActivation(typ, randF32(r, 32*nb), x[i*xrb:i*xrb+nb*xs]))
						}
						ldo := rows + 2
						out := make([]float32, m*ldo)
						nanFill(out)
						p.m(w, rb, rows, x, xrb, prepOf(p, x, xrb, m, nb), m, nb, out, ldo)
						for i := range m {
							want := make([]float32, rows)
							p.rows(w, rb, x[i*xrb:], nb, want)
							require.Equal(t, want, out[i*ldo:i*ldo+rows], "%s %s nb=%d rows=%d m=%d act row %d", typ, name, nb, rows, m, i)
							require.True(t, math.IsNaN(float64(out[i*ldo+rows])), "padding written")
						}
					}
				}
			}
		}
	}
}

// Mul with 1 to 16 activation rows on every path, multi-row kernel on and
// off: within the float64 reference's tolerance, and each row of an
// m-row product equal to the same row multiplied alone (what makes
// batched decoding equal sequential decoding).
func TestMulRowsMReference(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	r := rand.New(rand.NewPCG(38, 16))
	for typ, paths := range rowsMPaths {
		for name, p := range paths {
			for _, multi := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/multi=%v", typ, name, multi), func(t *testing.T) {
					q := p
					if !multi {
						q.m, q.fm = nil, nil
					}
					usePath(t, typ, q)
					mm := NewMatMul(pool)
					mm.noBLAS, mm.qgemm = true, qgemmOff // m = 16 stays on the row path too
					for _, sz := range []struct{ n, k int }{{37, 224}, {131, 576}} {
						n, k := sz.n, sz.k
						w := randWeights(r, typ, n, k)
						bias := randF32(r, n)
						for m := 1; m <= 16; m++ {
							ldx, ldo := k+3, n+1
							x := randF32(r, (m-1)*ldx+k)
							out := make([]float32, (m-1)*ldo+n)
							require.NoError(t, mm.Mul(typ, w, n, k, m, x, ldx, out, ldo, bias, nil, 0))
							want, mag := refMul(typ, w, n, k, m, x, ldx, bias, nil, 0)
							alone := make([]float32, n)
							for i := range m {
								require.NoError(t, mm.Mul(typ, w, n, k, 1, x[i*ldx:i*ldx+k], k, alone, n, bias, nil, 0))
								require.Equal(t, alone, out[i*ldo:i*ldo+n], "n=%d k=%d m=%d row %d alone", n, k, m, i)
								for j := range n {
									require.InDelta(t, want[i*n+j], float64(out[i*ldo+j]), tolFor(typ, false)*mag[i*n+j]+1e-4, "n=%d k=%d m=%d out[%d,%d]", n, k, m, i, j)
								}
							}
						}
					}
				})
			}
		}
	}
}

// prepOf is p's preparation of m activation rows xrb bytes apart.
func prepOf(p rowsMPath, x []byte, xrb, m, nb int) []float32 {
	xs := make([]float32, m*nb*p.prepN)
	for i := range m {
		p.prep(x[i*xrb:], nb, xs[i*nb*p.prepN:(i+1)*nb*p.prepN])
	}
	return xs
}

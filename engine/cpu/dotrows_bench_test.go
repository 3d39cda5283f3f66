package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
)

// BenchmarkRowsM: a row run that stays in L1 (48 rows of SmolLM2's
// 576-wide products) against m activation rows, one row at a time
// (single) and with the multi-row kernel, per path; ns/op is one
// weight-block × activation-row pair (32 elements for float types).
func BenchmarkRowsM(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const rows, nb = 48, 18
	for typ, paths := range rowsMPaths {
		ts, xs := kinds[typ].typeSize, kinds[typ].actBytes
		w := randWeights(r, typ, rows, 32*nb)
		for name, p := range paths {
			if p.rows == nil {
				benchRowsFM(b, r, typ, name, p)
				continue
			}
			if p.m == nil {
				continue
			}
			for _, m := range []int{1, 2, 4} {
				x := make([]byte, m*nb*xs)
				for i := range m {
					if err := ggml.QuantizeActivation(typ, randF32(r, 32*nb), x[i*nb*xs:(i+1)*nb*xs]); err != nil {
						b.Fatal(err)
					}
				}
				out := make([]float32, m*rows)
				sc := prepOf(p, x, nb*xs, m, nb)
				pairs := rows * nb * m
				b.Run(fmt.Sprintf("%s/%s/m=%d/single", typ, name, m), func(b *testing.B) {
					for range b.N / pairs {
						for i := range m {
							p.rows(w, nb*ts, x[i*nb*xs:], nb, out[i*rows:(i+1)*rows])
						}
					}
				})
				b.Run(fmt.Sprintf("%s/%s/m=%d/multi", typ, name, m), func(b *testing.B) {
					for range b.N / pairs {
						p.m(w, nb*ts, rows, x, nb*xs, sc, m, nb, out, rows)
					}
				})
			}
		}
	}
}

func benchRowsFM(b *testing.B, r *rand.Rand, typ ggml.Type, name string, p rowsMPath) {
	if p.fm == nil {
		return
	}
	const rows, k = 48, 576
	w := randWeights(r, typ, rows, k)
	rb := len(w) / rows
	for _, m := range []int{1, 2, 4} {
		x := randF32(r, m*k)
		out := make([]float32, m)
		pairs := rows * k / 32 * m
		b.Run(fmt.Sprintf("%s/%s/m=%d/single", typ, name, m), func(b *testing.B) {
			for range b.N / pairs {
				for j := range rows {
					for i := range m {
						out[i] = p.dotF(w[j*rb:(j+1)*rb], x[i*k:(i+1)*k])
					}
				}
			}
		})
		b.Run(fmt.Sprintf("%s/%s/m=%d/multi", typ, name, m), func(b *testing.B) {
			for range b.N / pairs {
				for j := range rows {
					p.fm(w[j*rb:(j+1)*rb], x, k, k, m, out)
				}
			}
		})
	}
}

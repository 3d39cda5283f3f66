package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func TestEmbed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_0, ggml.Q5_1} {
		for _, acc := range []bool{false, true} {
			t.Run(typ.String(), func(t *testing.T) {
				dim, rows, n, ldo := 512, 37, 5, 530
				if typ.BlockSize() == 1 {
					dim, ldo = 897, 903 // odd width where the type allows it
				}
				src := randVec(r, dim*rows, 1)
				rb, err := ggml.RowBytes(typ, int64(dim))
				require.NoError(t, err)
				table := make([]byte, int(rb)*rows)
				require.NoError(t, ggml.Quantize(typ, src, table))
				deq := make([]float32, dim*rows)
				require.NoError(t, ggml.Dequantize(typ, table, deq))

				ids := []int32{3, 0, 36, 3, 17}
				base := randVec(r, (n-1)*ldo+dim+9, 1)
				outInit := nans((n-1)*ldo + dim + 9)
				if acc {
					outInit = append([]float32(nil), base...)
					for i := 0; i < n; i++ {
						for j := dim; j < ldo && i < n-1; j++ {
							outInit[i*ldo+j] = float32NaN()
						}
					}
					for j := (n-1)*ldo + dim; j < len(outInit); j++ {
						outInit[j] = float32NaN()
					}
				}
				h := newHarness(t)
				tb := h.weights("table", table)
				ib := h.i32("ids", ids)
				ob := h.f32("out", outInit)
				flags := uint32(0)
				if acc {
					flags = plan.FlagAccumulate
				}
				h.add(plan.EmbedArgs{Type: typ, Table: bind(tb), Ids: bind(ib), Out: bind(ob), Add: plan.None, Dim: int(dim), N: int(n), Ldo: int(ldo), Flags: uint32(flags)}.Dispatch())
				h.run(plan.Vars{})
				want := make([]float64, n*dim)
				for i, id := range ids {
					for j := 0; j < dim; j++ {
						w := float64(deq[int(id)*dim+j])
						if acc {
							w = float64(float32(w) + base[i*ldo+j])
						}
						want[i*dim+j] = w
					}
				}
				checkOut(t, h.readF32(ob), want, n, ldo, dim, 0, "embed")
			})
		}
	}
}

func float32NaN() float32 { return nans(1)[0] }

func TestEmbedRejectsBadIDs(t *testing.T) {
	h := newHarness(t)
	tb := h.weights("table", make([]byte, 4*8*4))
	ib := h.i32("ids", []int32{1, 4})
	ob := h.nan("out", 16)
	h.add(plan.EmbedArgs{Type: ggml.F32, Table: bind(tb), Ids: bind(ib), Out: bind(ob), Add: plan.None, Dim: 8, N: 2, Ldo: 8}.Dispatch())
	h.load()
	require.ErrorContains(t, h.ex.Run(0, &plan.Vars{}), "id 4 outside the table's 4 rows")
	require.NoError(t, h.ex.Write(ib, 4, i32Bytes([]int32{-1})))
	require.ErrorContains(t, h.ex.Run(0, &plan.Vars{}), "id -1")
}

package msltest

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	kitdata "github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/shaders"
)

// TestMatrixGGMLKit runs the kernels on blocks quantized by ggml itself
// (llm-kit/ggml-quants: 10 rows of 512 elements per type, with edge rows:
// zeros, constants, outliers, magnitudes 1e3 and 1e-4). embed decodes every
// row and must equal ggml's to_float bit for bit (the executor does not
// fuse multiply-adds; Metal may, by an ulp); mat_vec multiplies the rows by
// the kit's activation and must match the float64 product of those values.
func TestMatrixGGMLKit(t *testing.T) {
	const rows, cols = 10, 512
	kit := func(name string) []byte {
		b, err := os.ReadFile(kitdata.Path(t, "llm-kit", "ggml-quants", name))
		require.NoError(t, err)
		return b
	}
	act := ggml.BytesF32(kit("activation_f32.bin"))
	require.Len(t, act, cols)
	for _, typ := range shaders.MatrixTypes() {
		if typ == ggml.F32 { // the kit has no f32 "quantization"
			continue
		}
		q := kit(typ.String() + ".quant.bin")
		want := ggml.BytesF32(kit(typ.String() + ".dequant_f32.bin"))
		require.Len(t, want, rows*cols, typ)

		// embed: every row, out of order, into a strided output
		ids := []int32{9, 0, 8, 1, 7, 2, 6, 3, 5, 4}
		idb := make([]byte, 4*len(ids))
		for i, id := range ids {
			binary.LittleEndian.PutUint32(idb[4*i:], uint32(id))
		}
		const ldo = cols + 3
		c := &mxCase{d: plan.Dispatch{Kernel: plan.Embed, Type: typ}}
		c.bind(0, c.add(q, true), 0)
		c.bind(1, c.add(idb, false), 0)
		ob := c.add(ggml.F32Bytes(filled(len(ids)*ldo, mxSentinel)), false)
		c.bind(2, ob, 0)
		c.out = int(ob)
		c.d.P = plan.EmbedArgs{Add: plan.None, Dim: cols, N: len(ids), Ldo: ldo}.Dispatch().P
		got := runOn(t, TestBackend(t), c)
		for tk, id := range ids {
			for i := 0; i < cols; i++ {
				require.Equal(t, math.Float32bits(want[int(id)*cols+i]), math.Float32bits(got[tk*ldo+i]),
					"embed %s row %d element %d", typ, id, i)
			}
			for i := cols; i < ldo && tk*ldo+i < len(got); i++ {
				require.Equal(t, float32(mxSentinel), got[tk*ldo+i], "embed %s wrote a gap", typ)
			}
		}

		// mat_vec: the ten rows against the kit's activation
		c = &mxCase{d: plan.Dispatch{Kernel: plan.MatVec, Type: typ}}
		c.bind(0, c.add(q, true), 0)
		c.bind(1, c.add(ggml.F32Bytes(act), false), 0)
		ob = c.add(ggml.F32Bytes(filled(rows, mxSentinel)), false)
		c.bind(2, ob, 0)
		c.out = int(ob)
		c.noBind(3)
		c.noBind(4)
		c.d.P = plan.MatVecArgs{N: rows, K: cols, M: 1, Ldx: cols, Ldo: rows, Ldr: rows}.Dispatch().P
		exact := make([]float64, rows)
		for r := range exact {
			for i := 0; i < cols; i++ {
				exact[r] += float64(want[r*cols+i]) * float64(act[i])
			}
		}
		got = runOn(t, TestBackend(t), c)
		for r := range exact {
			// per row: the rows' magnitudes span 1e-4 to 1e3
			var mag float64
			for i := 0; i < cols; i++ {
				mag += math.Abs(float64(want[r*cols+i]) * float64(act[i]))
			}
			require.InDelta(t, exact[r], float64(got[r]), 1e-6*mag+1e-30, "mat_vec %s row %d", typ, r)
		}
	}
}

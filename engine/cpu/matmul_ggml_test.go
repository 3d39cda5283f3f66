package cpu

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// TestGGMLVectors checks the activation quantizers byte for byte and the
// block dot products against ggml's own vec_dot results (llm-kit).
func TestGGMLVectors(t *testing.T) {
	dir := shared.Path(t, "llm-kit", "ggml-quants")
	var idx struct {
		Rows, Cols int
		Types      []struct {
			Type      string    `json:"type"`
			RowBytes  int       `json:"row_bytes"`
			QuantFile string    `json:"quant_file"`
			ActFile   string    `json:"activation_quant_file"`
			VecDot    []float64 `json:"vec_dot"`
		} `json:"types"`
	}
	raw, err := os.ReadFile(dir + "/index.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &idx))
	actRaw, err := os.ReadFile(dir + "/activation_f32.bin")
	require.NoError(t, err)
	act := make([]float32, idx.Cols)
	for i := range act {
		act[i] = math.Float32frombits(binary.LittleEndian.Uint32(actRaw[4*i:]))
	}
	tested := 0
	for _, tc := range idx.Types {
		typ, err := ggml.ParseType(tc.Type)
		require.NoError(t, err)
		kd, ok := kinds[typ]
		if !ok {
			continue // types Hark does not compute with (iq4_xs, tq*, mxfp4)
		}
		tested++
		w, err := os.ReadFile(dir + "/" + tc.QuantFile)
		require.NoError(t, err)
		var xq []byte
		if kd.id == kindQuant {
			want, err := os.ReadFile(dir + "/" + tc.ActFile)
			require.NoError(t, err)
			xq = make([]byte, idx.Cols/kd.blockSize*kd.actBytes)
			kd.quantize(act, xq)
			require.Equal(t, want, xq, "%s activation quantization", tc.Type)
		}
		for r := 0; r < idx.Rows; r++ {
			row := w[r*tc.RowBytes : (r+1)*tc.RowBytes]
			var got float32
			if kd.id == kindQuant {
				got = kd.dotQ(row, xq, idx.Cols/kd.blockSize)
			} else {
				// Hark keeps x in f32 for float weights, where ggml rounds it
				// to the weight type first; the difference is that rounding.
				got = kd.dotF(row, act)
			}
			want := tc.VecDot[r]
			tol := 4e-5*math.Abs(want) + 1e-6
			if kd.id != kindQuant {
				tol = 5e-3*math.Abs(want) + 1e-2
			}
			require.InDelta(t, want, float64(got), tol, "%s row %d", tc.Type, r)
		}
	}
	require.Equal(t, len(allTypes)-1, tested) // every type but f32, which llm-kit leaves out
}

package ggml

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// kitType is one entry of llm-kit/ggml-quants/index.json.
type kitType struct {
	Type               string    `json:"type"`
	TypeID             uint32    `json:"type_id"`
	RowBytes           int       `json:"row_bytes"`
	QuantFile          string    `json:"quant_file"`
	QuantRefFile       string    `json:"quant_ref_file"`
	DequantFile        string    `json:"dequant_file"`
	VecDotType         string    `json:"vec_dot_type"`
	ActivationFile     string    `json:"activation_quant_file"`
	VecDot             []float64 `json:"vec_dot"`
	FromFloatIdentical bool      `json:"from_float_ref_identical"`
}

type kitIndex struct {
	Rows  int       `json:"rows"`
	Cols  int       `json:"cols"`
	Types []kitType `json:"types"`
}

type kit struct {
	kitIndex
	input      []float32 // rows × cols
	activation []float32 // cols
}

func kitFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared.Path(t, "llm-kit", "ggml-quants", name))
	require.NoError(t, err)
	return b
}

func f32s(t testing.TB, b []byte) []float32 {
	t.Helper()
	require.Zero(t, len(b)%4)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func loadKit(t testing.TB) *kit {
	t.Helper()
	var k kit
	require.NoError(t, json.Unmarshal(kitFile(t, "index.json"), &k.kitIndex))
	require.Equal(t, 10, k.Rows)
	require.Equal(t, 512, k.Cols)
	k.input = f32s(t, kitFile(t, "input_f32.bin"))
	require.Len(t, k.input, k.Rows*k.Cols)
	k.activation = f32s(t, kitFile(t, "activation_f32.bin"))
	require.Len(t, k.activation, k.Cols)
	return &k
}

// harkTypes are the kit's types Hark must handle (dequantize, quantize,
// vec_dot); the kit's other types must be refused with an error naming them.
var harkTypes = map[string]bool{"f16": true, "bf16": true, "q4_0": true, "q4_1": true, "q5_0": true,
	"q5_1": true, "q8_0": true, "q2_K": true, "q3_K": true, "q4_K": true, "q5_K": true, "q6_K": true,
	"iq4_nl": true}

// byName indexes the kit's entries, failing if an expected type is absent.
func (k *kit) byName(t testing.TB) map[string]kitType {
	m := map[string]kitType{}
	for _, e := range k.Types {
		m[e.Type] = e
	}
	for want := range harkTypes {
		require.Contains(t, m, want)
	}
	return m
}

// requireSameBits compares floats by their bit patterns.
func requireSameBits(t *testing.T, want, got []float32, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: element %d (row %d col %d): want %g (%#08x), got %g (%#08x)", what, i,
				i/512, i%512, want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

// requireSameBytes reports the first differing block rather than a hex dump.
func requireSameBytes(t *testing.T, want, got []byte, blockBytes int, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if want[i] != got[i] {
			b := i / blockBytes
			t.Fatalf("%s: first difference at byte %d (block %d, offset %d):\nwant % x\ngot  % x", what, i, b,
				i%blockBytes, want[b*blockBytes:(b+1)*blockBytes], got[b*blockBytes:(b+1)*blockBytes])
		}
	}
}

func TestKitDequantize(t *testing.T) {
	k := loadKit(t)
	k.byName(t)
	for _, e := range k.Types {
		t.Run(e.Type, func(t *testing.T) {
			typ := Type(e.TypeID)
			require.Equal(t, e.Type, typ.String())
			q := kitFile(t, e.QuantFile)
			got := make([]float32, k.Rows*k.Cols)
			err := Dequantize(typ, q, got)
			if !harkTypes[e.Type] {
				require.ErrorContains(t, err, e.Type)
				return
			}
			require.NoError(t, err)
			requireSameBits(t, f32s(t, kitFile(t, e.DequantFile)), got, e.Type)
		})
	}
}

func TestKitQuantize(t *testing.T) {
	k := loadKit(t)
	k.byName(t)
	for _, e := range k.Types {
		t.Run(e.Type, func(t *testing.T) {
			typ := Type(e.TypeID)
			got := make([]byte, k.Rows*e.RowBytes)
			err := Quantize(typ, k.input, got)
			if !harkTypes[e.Type] {
				require.ErrorContains(t, err, e.Type)
				return
			}
			require.NoError(t, err)
			requireSameBytes(t, kitFile(t, e.QuantFile), got, typ.TypeSize(), e.Type)
		})
	}
}

func TestKitActivation(t *testing.T) {
	k := loadKit(t)
	for _, e := range k.Types {
		t.Run(e.Type, func(t *testing.T) {
			typ := Type(e.TypeID)
			if !harkTypes[e.Type] {
				_, err := ActivationBytes(typ, k.Cols)
				require.ErrorContains(t, err, e.Type)
				return
			}
			at, err := ActivationType(typ)
			require.NoError(t, err)
			require.Equal(t, e.VecDotType, at.String())
			n, err := ActivationBytes(typ, k.Cols)
			require.NoError(t, err)
			got := make([]byte, n)
			require.NoError(t, QuantizeActivation(typ, k.activation, got))
			requireSameBytes(t, kitFile(t, e.ActivationFile), got, at.TypeSize(), e.ActivationFile)
		})
	}
}

func TestKitVecDot(t *testing.T) {
	k := loadKit(t)
	for _, e := range k.Types {
		t.Run(e.Type, func(t *testing.T) {
			typ := Type(e.TypeID)
			w := kitFile(t, e.QuantFile)
			act := kitFile(t, e.ActivationFile)
			if !harkTypes[e.Type] {
				_, err := VecDot(typ, k.Cols, w[:e.RowBytes], act)
				require.ErrorContains(t, err, e.Type)
				return
			}
			require.Len(t, e.VecDot, k.Rows)
			for r := range k.Rows {
				got, err := VecDot(typ, k.Cols, w[r*e.RowBytes:(r+1)*e.RowBytes], act)
				require.NoError(t, err)
				// index.json prints floats with 9 significant digits, which
				// identifies a float32 uniquely: demand the same float.
				require.Equal(t, float32(e.VecDot[r]), got, "row %d", r)
			}
		})
	}
}

func TestKitIQ4NLRef(t *testing.T) {
	k := loadKit(t)
	e := k.byName(t)["iq4_nl"]
	require.False(t, e.FromFloatIdentical)
	require.Equal(t, "iq4_nl.quant_ref.bin", e.QuantRefFile)
	got := make([]byte, k.Rows*e.RowBytes)
	require.NoError(t, QuantizeIQ4NLRef(k.input, got))
	requireSameBytes(t, kitFile(t, e.QuantRefFile), got, BlockIQ4NLBytes, "iq4_nl ref")
	require.Error(t, QuantizeIQ4NLRef(k.input, got[:1]))
}

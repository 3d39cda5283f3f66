package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
)

// q8Blocks are rows of blocks that reach every branch of the quantizer:
// random magnitudes from tiny to huge, exact ties of x·id (a block whose
// largest magnitude is 127 has id 1), zeros of both signs, NaN,
// infinities, subnormal values and scales, values whose scale underflows
// to 0.
func q8Blocks(r *rand.Rand) [][]float32 {
	var rows [][]float32
	for range 2000 {
		row := make([]float32, 32*(1+r.IntN(5)))
		e := math.Pow(2, float64(r.IntN(200)-100))
		for i := range row {
			row[i] = float32(r.NormFloat64() * e)
		}
		rows = append(rows, row)
	}
	ties := make([]float32, 64)
	for i := range ties {
		ties[i] = float32(i%32-16) + 0.5
	}
	ties[0], ties[32] = 127, -127
	rows = append(rows, ties)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	sub := math.Float32frombits(1) // the smallest subnormal
	for _, special := range []float32{0, float32(math.Copysign(0, -1)), nan, -nan, inf, -inf, sub, 100 * sub, 0x1p-120, 0x1p-126, 127 * 0x1p-126, math.MaxFloat32} {
		row := make([]float32, 32)
		for i := range row {
			row[i] = float32(r.NormFloat64()) * special
		}
		row[r.IntN(32)] = special
		rows = append(rows, row)
	}
	return rows
}

// TestQuantQ8_0RowMatchesGGML: the decode's activation quantizer gives
// ggml.Quantize's bytes, with the assembly on and off.
func TestQuantQ8_0RowMatchesGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 1))
	rows := q8Blocks(r)
	asm := q8Block
	defer func() { q8Block = asm }()
	for _, on := range []bool{true, false} {
		if on && asm == nil {
			t.Log("no q8_0 block assembly on this CPU: portable path only")
			continue
		}
		q8Block = nil
		if on {
			q8Block = asm
		}
		for n, row := range rows {
			want := make([]byte, len(row)/32*34)
			require.NoError(t, ggml.Quantize(ggml.Q8_0, row, want))
			got := make([]byte, len(want))
			quantQ8_0Row(row, got)
			require.Equal(t, want, got, "asm=%v row %d", on, n)
		}
	}
}

// TestQ8_0ActivationKinds: kind.quantize takes quantQ8_0Row for every
// weight type whose activations are 34-byte blocks; ggml pairs each of
// them with Q8_0.
func TestQ8_0ActivationKinds(t *testing.T) {
	n := 0
	for typ, k := range kinds {
		if k.id == kindQuant && k.actBytes == q8_0Bytes {
			at, err := ggml.ActivationType(typ)
			require.NoError(t, err)
			require.Equal(t, ggml.Q8_0, at, "%s", typ)
			n++
		}
	}
	require.Positive(t, n)
}

func BenchmarkQuantQ8_0Row(b *testing.B) {
	r := rand.New(rand.NewPCG(37, 2))
	x := make([]float32, 1536)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]byte, len(x)/32*34)
	b.Run("ggml", func(b *testing.B) {
		for b.Loop() {
			_ = ggml.Quantize(ggml.Q8_0, x, dst)
		}
	})
	b.Run("row", func(b *testing.B) {
		for b.Loop() {
			quantQ8_0Row(x, dst)
		}
	})
}

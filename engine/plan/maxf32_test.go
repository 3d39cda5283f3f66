package plan

import (
	"math"
	"math/rand/v2"
	"testing"
)

// maxRows are logit-like rows of odd lengths around the 32-entry vector
// step, plain and with the special values planted in every lane position.
func maxRows() [][]float32 {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)), 0, float32(math.Copysign(0, -1))}
	var rows [][]float32
	for _, n := range []int{0, 1, 7, 31, 32, 33, 63, 64, 65, 97, 1501, 51864} {
		for trial := range 4 {
			plant := 0
			if trial > 0 {
				plant = 1 + r.IntN(3)
			}
			rows = append(rows, logitRow(r, n, special, plant))
		}
		if n > 0 { // every entry ≤ 0, the largest a zero of either sign
			for _, z := range []float32{0, float32(math.Copysign(0, -1))} {
				s := make([]float32, n)
				for i := range s {
					s[i] = -float32(r.Float64()) - 1
				}
				s[r.IntN(n)] = z
				if n > 1 {
					s[r.IntN(n)] = -z
				}
				rows = append(rows, s)
			}
		}
	}
	return rows
}

// logitRow is n logit-like values (normal, mean −3, deviation 4) with
// plant of them (none when n is 0) replaced by entries of special.
func logitRow(r *rand.Rand, n int, special []float32, plant int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64()*4 - 3)
	}
	for range plant * min(n, 1) {
		s[r.IntN(n)] = special[r.IntN(len(special))]
	}
	return s
}

// maxRef64 folds s in float64 by the builtin's rules (NaN wins, +0 over −0).
func maxRef64(s []float32) float32 {
	m := math.Inf(-1)
	for _, v := range s {
		x := float64(v)
		switch {
		case math.IsNaN(x) || math.IsNaN(m):
			m = math.NaN()
		case x > m || x == 0 && m == 0 && !math.Signbit(x):
			m = x
		}
	}
	return float32(m)
}

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || math.IsNaN(float64(a)) && math.IsNaN(float64(b))
}

func TestMaxF32(t *testing.T) {
	for i, s := range maxRows() {
		if got, want := MaxF32(s), maxRef64(s); !sameF32(got, want) {
			t.Fatalf("row %d (n %d): MaxF32 %v (%#x), float64 reference %v (%#x)", i, len(s), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

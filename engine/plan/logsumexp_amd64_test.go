package plan

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expSum4's terms are math.Exp's bit for bit: random differences in
// [−700, 700] (most where logits lie), and sums over logit-like rows of odd lengths with the special cases
// math.Exp handles itself (−Inf, NaN, subnormal and overflowing results,
// the ±700 edges) in every lane position; forced on and off.
func TestExpSumMatchesMathExp(t *testing.T) {
	if !useExpSum4 {
		t.Fatal("this CPU lacks AVX2 and FMA: expSum4 cannot be checked here")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 200000 {
		d := float32(r.Float64()*1400 - 700)
		switch i % 4 {
		case 0:
			d = float32(r.NormFloat64() * 10)
		case 1:
			d = -float32(r.Float64() * 40)
		}
		q := []float32{d, d, d, d} // four equal terms: their sums differ where the terms do
		got, k := expSum4(&q[0], 4, 0, 0)
		want := expSumGo(q, 0, 0)
		if k != 4 || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("exp(%v): four sum to %v (%d added), math.Exp's to %v", d, got, k, want)
		}
	}

	special := []float32{float32(math.Inf(-1)), float32(math.NaN()), -745, -720, -700.5, -700, 700, 700.5, 710, float32(math.Inf(1))}
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 63, 64, 65, 1501, 51864} {
		for trial := range 6 {
			plant := 0
			if trial > 0 {
				plant = 1 + n/50
			}
			s := logitRow(r, n, special, plant)
			m := float32(0)
			for _, v := range s {
				if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
					m = max(m, v)
				}
			}
			if trial == 5 {
				m += 690 // most terms subnormal or below the lanes' range
			}
			want := expSumGo(s, m, 0)
			got := expSum(s, m)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("n %d trial %d: expSum %v, math.Exp's %v", n, trial, got, want)
			}
			useExpSum4 = false
			off := expSum(s, m)
			useExpSum4 = true
			if math.Float64bits(off) != math.Float64bits(want) && !(math.IsNaN(off) && math.IsNaN(want)) {
				t.Fatalf("n %d trial %d: forced off %v, want %v", n, trial, off, want)
			}
		}
	}
}

func BenchmarkLogSumExp(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s := make([]float32, 51864)
	for i := range s {
		s[i] = float32(r.NormFloat64()*4 - 3)
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "math.Exp", true: "expSum4"}[on], func(b *testing.B) {
			defer func() { useExpSum4 = true }()
			useExpSum4 = on
			for b.Loop() {
				LogSumExp(s)
			}
		})
	}
}

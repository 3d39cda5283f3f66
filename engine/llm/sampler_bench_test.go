package llm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkHostSample times the host sampler on the settings of the CPU
// kernel's BenchmarkSample: logits from N(0, 3), temperature 0.7, top-k
// 40, top-p 0.95.
func BenchmarkHostSample(b *testing.B) {
	for _, n := range []int{49152, 152064, 262144} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 5))
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = float32(r.NormFloat64() * 3)
			}
			s := Sampler{Temperature: 0.7, TopK: 40, TopP: 0.95, Seed: 1}
			var h hostSampler
			b.ReportAllocs()
			step := uint64(0)
			for b.Loop() {
				step++
				h.sample(s, logits, nil, step)
			}
		})
	}
}

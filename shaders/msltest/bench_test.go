package msltest

import (
	"testing"
	"unsafe"
)

// BenchmarkCollectives reports the cost of one SIMD-group collective
// (32 lanes meeting), the executor's unit of synchronisation.
func BenchmarkCollectives(b *testing.B) {
	l := selftestLib(b)
	const threads, groups, rounds = 256, 8, 512
	out := make([]float32, threads*groups)
	r := []uint32{rounds}
	ln := launch1("collective_loop", groups, threads)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := l.Run(ln, &[16]unsafe.Pointer{f32ptr(out), unsafe.Pointer(&r[0])}); err != nil {
			b.Fatal(err)
		}
	}
	collectives := float64(b.N) * groups * threads / 32 * rounds
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/collectives, "ns/collective")
}

package whisper

import (
	"testing"
	"time"

	"github.com/harkapp/hark/internal/shared"
)

// BenchmarkEncode is one encoder pass over a 30-s window (plus the
// cross-attention K/V), the unit whisper.cpp reports as "encode time".
func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"ggml-kit-tiny.en-f16.bin", "ggml-kit-tiny.en-q8_0.bin"} {
		b.Run(name, func(b *testing.B) {
			_, m := loadKit(b, name)
			mel := readF32(b, shared.Path(b, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))
			if err := m.Encode(mel); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if err := m.Encode(mel); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/window")
		})
	}
}

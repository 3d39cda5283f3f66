package whisper

import (
	"context"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

var kitModels = []string{"ggml-kit-tiny.en-f16.bin", "ggml-kit-tiny.en-q8_0.bin"}

// BenchmarkEncode is one encoder pass over a 30-s window (plus the
// cross-attention K/V), the unit whisper.cpp reports as "encode time".
func BenchmarkEncode(b *testing.B) {
	for _, name := range kitModels {
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
			b.ReportMetric(float64(time.Since(start).Microseconds())/1e3/float64(b.N), "ms/window")
		})
	}
}

// BenchmarkDecodeToken is one decoder step (one token, KV cache of 64
// positions, cross-attention over the whole window, logits).
func BenchmarkDecodeToken(b *testing.B) {
	for _, name := range kitModels {
		b.Run(name, func(b *testing.B) {
			_, m := loadKit(b, name)
			mel := readF32(b, shared.Path(b, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))
			if err := m.Encode(mel); err != nil {
				b.Fatal(err)
			}
			prompt := make([]int32, 64)
			for i := range prompt {
				prompt[i] = int32(300 + i)
			}
			if _, err := m.Prompt(prompt, 0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := m.Prompt([]int32{843}, 64); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1e3/float64(b.N), "ms/token")
		})
	}
}

// BenchmarkTranscribe is the whole path for a file, greedy: decoding the
// audio, log-mel, every window; it reports the real-time factor.
func BenchmarkTranscribe(b *testing.B) {
	for _, clip := range []string{"jfk", "ljspeech-longform-LJ001-0021-0076"} {
		for _, name := range kitModels {
			b.Run(clip+"/"+name, func(b *testing.B) {
				f, m := loadKit(b, name)
				path := shared.Path(b, "audio", clip+".wav")
				samples, err := audio.Load16k(path)
				if err != nil {
					b.Fatal(err)
				}
				opt := DefaultTranscribeOptions()
				opt.Language = "en"
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					if _, err := f.TranscribeFile(context.Background(), m, path, opt); err != nil {
						b.Fatal(err)
					}
				}
				sec := time.Since(start).Seconds() / float64(b.N)
				b.ReportMetric(sec, "s/file")
				b.ReportMetric(sec/(float64(len(samples))/SampleRate), "RTF")
			})
		}
	}
}

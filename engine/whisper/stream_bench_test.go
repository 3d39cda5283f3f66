package whisper

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/internal/shared"
)

// cpuTime is the process's user+system time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// streamKitModel is the kit model BenchmarkStream and
// TestKitStreamMatchesOffline stream through: f16 by default; a run on
// another machine may carry the smaller q8_0 file (it transcribes every
// clip to the reference text too: TestKitClipsQ8).
var streamKitModel = flag.String("stream.model", "ggml-kit-tiny.en-f16.bin", "kit model file for the streaming test and benchmark")

// BenchmarkStream streams 5 s (a kit clip), 30 s and 120 s (the start of
// the long-form file) through the kit model on the CPU backend with
// 2 threads (the targets' setting), 100 ms at a time with one decode per
// second of audio, as fast as the decoder goes (real-time pacing only
// batches audio, it does not change the decodes). It reports the CPU
// time per second of audio while streaming (cpu-s/audio-s: compare 120 s
// with 5 s) and, at release, Finish's wall time and CPU time (release-ms,
// release-cpu-ms: the tail decode, which should not grow with the length)
// and the median audio lag of the commits made while streaming
// (audio-lag-s: audio received at the commit minus the end of the
// committed words; the wall lag adds the decode's own time). encoder-ms is
// one encoder pass of a 30-s window (every window costs one; the median of
// three before the stream), window-ms the median wall time of the
// stream's window decodes. Every 10 s of audio a progress line goes to
// stderr, so a run cut at its time limit still says how far it got.
func BenchmarkStream(b *testing.B) {
	f, err := OpenFile(shared.Path(b, "whisper-kit", "models", *streamKitModel))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	be := cpu.New(cpu.Options{Threads: 2})
	defer be.Close()
	m, err := f.Load(be, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	clip, err := audio.Load16k(shared.Path(b, "audio", "ljspeech-LJ001-0004.wav"))
	if err != nil {
		b.Fatal(err)
	}
	long, err := audio.Load16k(shared.Path(b, "audio", longformAudio))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		x    []float32
	}{{"5s", clip[:5*SampleRate]}, {"30s", long[:30*SampleRate]}, {"120s", long[:120*SampleRate]}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				encoder := medianOf(3, func() time.Duration {
					w := time.Now()
					if err := m.Encode(make([]float32, m.H.NMels*m.H.NFrames())); err != nil {
						b.Fatal(err)
					}
					return time.Since(w)
				})
				var windows []time.Duration
				var received float64
				var lags []float64
				s := NewStreamer(timedWindows{NewStreamModel(f, m), &windows}, StreamConfig{}, func(e StreamEvent) {
					if e.Type == EventCommitted {
						lags = append(lags, received-e.AudioEnd)
					}
				})
				ctx := context.Background()
				c0, w0 := cpuTime(b), time.Now()
				for i := 0; i < len(c.x); i += SampleRate / 10 {
					if i > 0 && i%(10*SampleRate) == 0 {
						fmt.Fprintf(os.Stderr, "%s: %d s of audio, %.1f s CPU, %.1f s wall, %d decodes\n",
							c.name, i/SampleRate, (cpuTime(b) - c0).Seconds(), time.Since(w0).Seconds(), s.Decodes())
					}
					received = float64(min(i+SampleRate/10, len(c.x))) / SampleRate
					if err := s.Write(ctx, c.x[i:min(i+SampleRate/10, len(c.x))]); err != nil {
						b.Fatal(err)
					}
				}
				if len(lags) > 0 {
					slices.Sort(lags)
					b.ReportMetric(lags[len(lags)/2], "audio-lag-s")
				}
				c1 := cpuTime(b)
				w := time.Now()
				res, err := s.Finish(ctx)
				if err != nil {
					b.Fatal(err)
				}
				rel := time.Since(w)
				c2 := cpuTime(b)
				secs := float64(len(c.x)) / SampleRate
				b.ReportMetric((c1-c0).Seconds()/secs, "cpu-s/audio-s")
				b.ReportMetric(float64(s.Decodes()), "decodes")
				b.ReportMetric(float64(rel.Milliseconds()), "release-ms")
				b.ReportMetric(float64((c2 - c1).Milliseconds()), "release-cpu-ms")
				b.ReportMetric(float64(encoder.Milliseconds()), "encoder-ms")
				slices.Sort(windows)
				b.ReportMetric(float64(windows[len(windows)/2].Milliseconds()), "window-ms")
				b.Logf("%s: %d decodes: %q", c.name, s.Decodes(), res.Text)
			}
		})
	}
}

// medianOf is the median of n results of f.
func medianOf(n int, f func() time.Duration) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = f()
	}
	slices.Sort(ds)
	return ds[n/2]
}

// timedWindows records the wall time of every window decode.
type timedWindows struct {
	t WindowTranscriber
	d *[]time.Duration
}

func (w timedWindows) TranscribeWindow(ctx context.Context, x []float32, p string) ([]Segment, error) {
	t := time.Now()
	defer func() { *w.d = append(*w.d, time.Since(t)) }()
	return w.t.TranscribeWindow(ctx, x, p)
}

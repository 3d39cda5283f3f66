//go:build linux && cgo

package app

import (
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
)

// releaseCase is a dictation BenchmarkStreamedReleaseToText makes: a
// model and what is said into it.
type releaseCase struct {
	name, model string
	cfg         whisper.StreamConfig
	speech      func(b *testing.B) (x []float32, want string)
}

func releaseCases(b *testing.B) []releaseCase {
	kit := func(b *testing.B) ([]float32, string) {
		x, err := audio.Load16k(shared.Path(b, "audio", loopbackClip+".wav"))
		require.NoError(b, err)
		return x, kitText(b, loopbackClip)
	}
	return []releaseCase{
		// the kit model was never trained with prompts
		{"kit-f16", shared.Path(b, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"), whisper.StreamConfig{NoPrompt: true}, kit},
		{"kit-q8_0", shared.Path(b, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), whisper.StreamConfig{NoPrompt: true}, kit},
		{"speechkit", sk.ModelPath(b), whisper.StreamConfig{}, func(b *testing.B) ([]float32, string) {
			// TestDictationSpeechkitLoopback's three sentences (8.6 s)
			ev, x := sk.LoadSet(b)
			ss := ev.Sentences[loopbackFirst : loopbackFirst+loopbackN]
			var spoken []string
			for _, s := range ss {
				spoken = append(spoken, s.Spoken)
			}
			return sk.Speaking(x[ss[0].Start:ss[len(ss)-1].End]), strings.Join(spoken, " ")
		}},
	}
}

// BenchmarkStreamedReleaseToText is the dictation target's figure on the
// hotkey's path as the app runs it: the speech is captured in real time
// (100 ms periods from a test device, after 100 ms of pre-roll), streamed live (partial text while speaking),
// and the time is from the release (the dictation service's Stop) to the
// text handed to the output. Each release is logged with the process's
// CPU time over it and the text; the metrics are the median release and
// the median CPU time. CPU backend, 2 threads.
//
//	go test ./app -run '^$' -bench StreamedReleaseToText -benchtime 5x
func BenchmarkStreamedReleaseToText(b *testing.B) {
	for _, c := range releaseCases(b) {
		b.Run(c.name, func(b *testing.B) {
			clip, want := c.speech(b)
			// Silence, 100 ms before (pre-roll) and 300 ms after: the kit
			// model, which knows its clips from their onsets, says another
			// clip's sentence for this one behind 300 ms of silence.
			lead, tone := make([]float32, 1600), make([]float32, 4800)
			x := append(append([]float32{}, clip...), tone...)
			models := b.TempDir()
			linkModel(b, c.model, models, "speech.bin")
			a := openApp(b, b.TempDir(), models, nil)
			a.Dictation.streamConfig = c.cfg
			setOutput(b, a, "copy")
			out := &timedOutput{}
			a.SetOutput(out)
			src := &feedSource{}
			cr := NewCaptureRecorder(src.open)
			b.Cleanup(func() { cr.Close() })
			rec := &spyStreamed{CaptureRecorder: cr}
			a.SetRecorder(rec)
			require.NoError(b, cr.Arm(""))
			var walls, cpus []float64
			for b.Loop() {
				b.StopTimer()
				src.push(lead, 160) // pre-roll
				require.NoError(b, a.Dictation.Start())
				for i := 0; i < len(x); i += 1600 { // in real time
					src.push(x[i:min(i+1600, len(x))], 160)
					time.Sleep(100 * time.Millisecond)
				}
				cpu0 := cpuTime(b)
				released := time.Now()
				b.StartTimer()
				_, err := a.Dictation.Stop()
				b.StopTimer()
				require.NoError(b, err)
				cpu := cpuTime(b) - cpu0
				text, at := out.last()
				wall := at.Sub(released)
				walls, cpus = append(walls, ms(wall)), append(cpus, ms(cpu))
				b.Logf("release to text %v (CPU %v), streamed %v, WER %.3f: %q", wall.Round(time.Millisecond),
					cpu.Round(time.Millisecond), rec.got != nil, shared.WER(want, text), text)
				b.StartTimer()
			}
			b.ReportMetric(median(walls), "release-ms")
			b.ReportMetric(median(cpus), "release-cpu-ms")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	s := append([]float64{}, v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

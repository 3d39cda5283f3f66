package meeting

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// kitTranscriber is the kit model (it recognizes the shared clips) on one
// CPU thread.
func kitTranscriber(t *testing.T) whisper.WindowTranscriber {
	f, err := whisper.OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	be := cpu.New(cpu.Options{Threads: 1})
	t.Cleanup(be.Close)
	m, err := f.Load(be, whisper.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return whisper.NewStreamModel(f, m)
}

// meetingFrames lays clips on the two channels: each entry puts gain*clip
// on channel ch from second at.
type placed struct {
	ch   int
	at   float64
	gain float32
	x    []float32
}

func meetingFrames(secs float64, parts ...placed) []float32 {
	n := int(secs * rate)
	out := make([]float32, am.Channels*n)
	for _, p := range parts {
		o := int(p.at * rate)
		for i, v := range p.x {
			if o+i < n {
				out[(o+i)*am.Channels+p.ch] += p.gain * v
			}
		}
	}
	return out
}

// runLive streams frames through a Live in 100 ms pieces.
func runLive(t *testing.T, frames []float32) ([]Word, *Live, []Word) {
	tr := kitTranscriber(t)
	var live []Word
	l := NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{
		Stream: whisper.StreamConfig{NoPrompt: true}, OnWords: func(ws []Word) { live = append(live, ws...) }})
	step := am.Channels * rate / 10
	for i := 0; i < len(frames); i += step {
		require.NoError(t, l.Write(context.Background(), frames[i:min(i+step, len(frames))]))
	}
	words, err := l.Finish(context.Background())
	require.NoError(t, err)
	return words, l, live
}

func speakerText(ws []Word, sp int) string {
	var b []string
	for _, w := range ws {
		if w.Speaker == sp {
			b = append(b, w.Text)
		}
	}
	return strings.Join(b, " ")
}

func norm(s string) string {
	s = strings.ToLower(s)
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || r == '\'') }), " ")
}

// TestLiveOverlap: the call ("Others") and the user ("You") talk over
// each other; each side's words come out under its own label, on the
// meeting's timeline, and the merge orders them by time. Short clips: the
// kit model's decodes are what this test costs.
func TestLiveOverlap(t *testing.T) {
	frames := meetingFrames(7, placed{am.Others, 1, 1, clip(t, "ljspeech-LJ001-0002.wav")},
		placed{am.You, 2, 1, clip(t, "librivox-sense-and-sensibility-0880.wav")})
	words, l, live := runLive(t, frames)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("Others: %s\nYou: %s\ndecodes %v", gotO, gotY, l.Decodes())
	require.Less(t, shared.WER(norm(refText(t, "ljspeech-LJ001-0002")), norm(gotO)), 0.2, "the call's words, as Others")
	require.Less(t, shared.WER(norm(refText(t, "librivox-sense-and-sensibility-0880")), norm(gotY)), 0.2, "the user's words, as You")
	require.Equal(t, len(words), len(live), "every word was handed on live")
	for _, w := range words {
		if w.Speaker == am.You {
			require.GreaterOrEqual(t, w.Start, 1.5, "a You word before the user spoke: %+v", w)
		} else {
			require.GreaterOrEqual(t, w.Start, 0.5, "an Others word before the call spoke: %+v", w)
			require.LessOrEqual(t, w.End, 3.5, "an Others word after the call ended: %+v", w)
		}
	}
	for i := 1; i < len(words); i++ {
		require.LessOrEqual(t, words[i-1].Start, words[i].Start, "merged by time")
	}
}

// TestLiveEcho: the call leaks into the microphone (30%, 100 ms late)
// while the user is quiet: the leak is found and not transcribed as the
// user's, and the user's own words after it still are.
func TestLiveEcho(t *testing.T) {
	call := clip(t, "librivox-sense-and-sensibility-0930.wav")
	frames := meetingFrames(9, placed{am.Others, 1, 1, call}, placed{am.You, 1.1, 0.3, call},
		placed{am.You, 5.5, 1, clip(t, "ljspeech-LJ001-0002.wav")})
	words, l, _ := runLive(t, frames)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("Others: %s\nYou: %s\nskipped %v, decodes %v", gotO, gotY, l.Skipped(), l.Decodes())
	require.Less(t, shared.WER(norm(refText(t, "librivox-sense-and-sensibility-0930")), norm(gotO)), 0.2)
	require.Less(t, shared.WER(norm(refText(t, "ljspeech-LJ001-0002")), norm(gotY)), 0.2,
		"You holds the user's words and not the call's echo")
	require.Greater(t, l.Skipped()[am.You], 2.0, "the echo was found")
	require.Zero(t, l.Skipped()[am.Others])
}

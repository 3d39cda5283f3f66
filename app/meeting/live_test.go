package meeting

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/testaudio"
)

// kitTranscriber is the kit model (it recognizes the shared clips) on one
// CPU thread.
func kitTranscriber(t *testing.T) whisper.WindowTranscriber {
	return whisper.NewStreamModel(testaudio.Kit(t))
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
func runLive(t *testing.T, frames []float32) ([]channels.Word, *Live, []channels.Word) {
	tr := kitTranscriber(t)
	var live []channels.Word
	l := NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{
		Stream: whisper.StreamConfig{NoPrompt: true}, OnWords: func(ws []channels.Word) { live = append(live, ws...) }})
	step := am.Channels * rate / 10
	for i := 0; i < len(frames); i += step {
		require.NoError(t, l.Write(context.Background(), frames[i:min(i+step, len(frames))]))
	}
	words, err := l.Finish(context.Background())
	require.NoError(t, err)
	return words, l, live
}

func speakerText(ws []channels.Word, sp int) string {
	var b []string
	for _, w := range ws {
		if w.Speaker == sp {
			b = append(b, w.Text)
		}
	}
	return strings.Join(b, " ")
}

// TestLiveOverlap: the call ("Others") and the user ("You") talk over
// each other; each side's words come out under its own label, on the
// meeting's timeline, and the merge orders them by time. Short clips: the
// kit model's decodes are what this test costs.
func TestLiveOverlap(t *testing.T) {
	frames := meetingFrames(7, placed{am.Others, 1, 1, testaudio.Load(t, "ljspeech-LJ001-0002")},
		placed{am.You, 2, 1, testaudio.Load(t, "librivox-sense-and-sensibility-0880")})
	words, l, live := runLive(t, frames)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("Others: %s\nYou: %s\ndecodes %v", gotO, gotY, l.Decodes())
	require.Less(t, testaudio.WER(t, "ljspeech-LJ001-0002", gotO), 0.2, "the call's words, as Others")
	require.Less(t, testaudio.WER(t, "librivox-sense-and-sensibility-0880", gotY), 0.2, "the user's words, as You")
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
	call := testaudio.Load(t, "librivox-sense-and-sensibility-0930")
	frames := meetingFrames(9, placed{am.Others, 1, 1, call}, placed{am.You, 1.1, 0.3, call},
		placed{am.You, 5.5, 1, testaudio.Load(t, "ljspeech-LJ001-0002")})
	words, l, _ := runLive(t, frames)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("Others: %s\nYou: %s\nskipped %v, decodes %v", gotO, gotY, l.Skipped(), l.Decodes())
	require.Less(t, testaudio.WER(t, "librivox-sense-and-sensibility-0930", gotO), 0.2)
	require.Less(t, testaudio.WER(t, "ljspeech-LJ001-0002", gotY), 0.2,
		"You holds the user's words and not the call's echo")
	require.Greater(t, l.Skipped()[am.You], 2.0, "the echo was found")
	require.Zero(t, l.Skipped()[am.Others])
}

// growing is a transcriber whose one word always runs to the window's
// end, as a word still being said does: two decodes never agree on it, so
// its words are committed only where the utterance ends.
type growing struct{}

func (growing) TranscribeWindow(_ context.Context, samples []float32, _ string) ([]whisper.Segment, error) {
	end := float64(len(samples))/rate - 0.01
	return []whisper.Segment{{End: end, Text: " said", Words: []whisper.Word{{Word: " said", End: end}}}}, nil
}

// TestLiveEchoEndsUtterance: the user stops talking and the call starts
// at once, leaking into the microphone; the gate closes on the echo before
// the user's pause, and the user's words are committed there, not left
// waiting for the user's next words (or the meeting's end).
func TestLiveEchoEndsUtterance(t *testing.T) {
	you, call := testaudio.Load(t, "librivox-sense-and-sensibility-0880"), testaudio.Load(t, "librivox-sense-and-sensibility-0930")
	over := 0.5 + float64(len(you))/rate
	frames := meetingFrames(over+6, placed{am.You, 0.5, 1, you}, placed{am.Others, over, 1, call},
		placed{am.You, over + 0.1, 0.3, call})
	var live []channels.Word
	l := NewLive([am.Channels]whisper.WindowTranscriber{growing{}, growing{}}, LiveConfig{
		OnWords: func(ws []channels.Word) { live = append(live, ws...) }})
	step := am.Channels * rate / 10
	for i := 0; i < len(frames); i += step {
		require.NoError(t, l.Write(context.Background(), frames[i:min(i+step, len(frames))]))
	}
	t.Logf("live %v, skipped %v, decodes %v", live, l.Skipped(), l.Decodes())
	require.Greater(t, l.Skipped()[am.You], 1.0, "the call's leak into the microphone is echo")
	require.NotEmpty(t, speakerText(live, am.You), "the user's words, committed where the echo closed the gate")
	words, err := l.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(words), len(live), "nothing left for the end")
}

// TestLiveCatchUp: a writer that fell behind (a busy machine) hands Live
// its whole backlog in one Write. The words are those a writer keeping up
// gets (TestLiveOverlap's meeting), for fewer decodes: the transcribers
// get the backlog catchUp at a time and decode once per piece and per
// pause, not once a second. Heard moves on through the backlog, a whole
// second at a time, to its end.
func TestLiveCatchUp(t *testing.T) {
	frames := meetingFrames(7, placed{am.Others, 1, 1, testaudio.Load(t, "ljspeech-LJ001-0002")},
		placed{am.You, 2, 1, testaudio.Load(t, "librivox-sense-and-sensibility-0880")})
	tr := kitTranscriber(t)
	var heard []float64
	var live []channels.Word
	l := NewLive([am.Channels]whisper.WindowTranscriber{tr, tr}, LiveConfig{
		Stream:  whisper.StreamConfig{NoPrompt: true},
		OnWords: func(ws []channels.Word) { live = append(live, ws...) },
		OnHeard: func(s float64) { heard = append(heard, s) }})
	require.NoError(t, l.Write(context.Background(), frames))
	require.InDelta(t, 7.0, l.Heard(), 1e-9, "the backlog is all transcribed when Write returns")
	words, err := l.Finish(context.Background())
	require.NoError(t, err)
	gotO, gotY := speakerText(words, am.Others), speakerText(words, am.You)
	t.Logf("Others: %s\nYou: %s\ndecodes %v, heard %v", gotO, gotY, l.Decodes(), heard)
	require.Less(t, testaudio.WER(t, "ljspeech-LJ001-0002", gotO), 0.2, "the call's words, as Others")
	require.Less(t, testaudio.WER(t, "librivox-sense-and-sensibility-0880", gotY), 0.2, "the user's words, as You")
	require.Equal(t, len(words), len(live), "every word was handed on live")
	// Each side's speech (with its pre-roll and the gate's hang) is under
	// catchUp: one piece a channel, decoded at its pause, and perhaps once
	// more at the piece's end; 100-ms writes decode once a second of
	// speech and again at the pause (3-5 in TestLiveOverlap).
	for ch, n := range l.Decodes() {
		require.LessOrEqual(t, n, 2, "%s's decodes", am.Names[ch])
	}
	require.Equal(t, []float64{7}, heard, "Heard told once, at the piece's end")
}

// windowCounter is a transcriber that hears nothing and keeps the length
// of every window it was asked to decode.
type windowCounter struct{ windows []int }

func (w *windowCounter) TranscribeWindow(_ context.Context, samples []float32, _ string) ([]whisper.Segment, error) {
	w.windows = append(w.windows, len(samples))
	return nil, nil
}

// TestLiveCatchUpPieces: an 11-s stretch of sound on one channel, handed
// over in one Write, reaches its transcriber catchUp at a time: each piece
// is decoded once (against once a second when written as it comes),
// every window stays under Whisper's 30 s, and Heard moves on after each
// piece.
func TestLiveCatchUpPieces(t *testing.T) {
	noise := make([]float32, 11*rate)
	for i := range noise {
		noise[i] = 0.3 * float32(math.Sin(float64(i)*0.37)*math.Sin(float64(i)*0.011))
	}
	frames := meetingFrames(12, placed{am.You, 0.5, 1, noise})
	run := func(step int) (*windowCounter, []float64) {
		tr := [am.Channels]*windowCounter{{}, {}}
		var heard []float64
		l := NewLive([am.Channels]whisper.WindowTranscriber{tr[0], tr[1]}, LiveConfig{
			OnHeard: func(s float64) { heard = append(heard, s) }})
		for i := 0; i < len(frames); i += step {
			require.NoError(t, l.Write(context.Background(), frames[i:min(i+step, len(frames))]))
		}
		require.InDelta(t, 12.0, l.Heard(), 1e-9)
		require.Empty(t, tr[am.Others].windows, "a silent channel costs nothing")
		return tr[am.You], heard
	}
	asItComes, _ := run(am.Channels * rate / 10)
	behind, heard := run(len(frames))
	t.Logf("windows as it comes %v, behind %v; heard %v", asItComes.windows, behind.windows, heard)
	require.GreaterOrEqual(t, len(asItComes.windows), 10, "once a second as it comes")
	require.Len(t, behind.windows, 3, "once a piece when behind: 5 s, 10 s, the rest")
	for _, n := range behind.windows {
		require.Less(t, n, 30*rate, "a window under Whisper's 30 s")
	}
	require.Len(t, heard, 3, "Heard told after each piece")
	require.InDelta(t, 12.0, heard[2], 1e-9)
	require.True(t, heard[0] < heard[1] && heard[1] < heard[2], "Heard moves on: %v", heard)
}

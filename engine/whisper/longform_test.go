package whisper

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

const longformAudio = "ljspeech-longform-LJ001-0021-0076.wav"

// The 6.5-minute file, greedy without word timestamps, matches the
// reference segment by segment: 56 segments over 16 windows.
func TestKitLongformGreedy(t *testing.T) {
	t.Parallel()
	testLongform(t, "longform-nowords.json", 1, 2)
}

// The same with beam search (beam 5).
func TestKitLongformBeam5(t *testing.T) {
	t.Parallel()
	testLongform(t, "longform-beam5-nowords.json", 5, 1)
}

// testLongform compares a whole long-form run (shortWindows windows with
// -short).
func testLongform(t *testing.T, refName string, beam, shortWindows int) {
	var want refResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "longform", refName), &want)
	f, m := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", beam)
	kitMemoEncodes(t, m, "ggml-kit-tiny.en-f16.bin") // (greedy and beam search seek alike: each window is encoded once)
	opt := DefaultTranscribeOptions()
	opt.Temperatures = []float32{0}
	opt.Language = "en"
	opt.BeamSize = beam
	stop := shortLongformSeek(want.Segments, shortWindows)
	got := transcribeUntil(t, f, m, opt, stop)
	if testing.Short() {
		want.Segments = segmentsBefore(want.Segments, stop)
		require.Len(t, got.Segments, len(want.Segments))
		want.Text, got.Text = "", ""
	}
	compareResult(t, refName, &want, got, 0.02, 0)
}

// With word timestamps the reference seeks to the end of the last word,
// windows the model was not trained on; the README calls the segments
// before the window at seek 34040 (5:40) the robust part: they must match,
// words included.
func TestKitLongformWords(t *testing.T) {
	t.Parallel()
	var want refResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "longform", "longform.json"), &want)
	stop := 34040
	if testing.Short() {
		stop = shortLongformSeek(want.Segments, 1)
	}
	want.Segments = segmentsBefore(want.Segments, stop)
	require.NotEmpty(t, want.Segments)
	f, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	kitMemoEncodes(t, m, "ggml-kit-tiny.en-f16.bin")
	opt := DefaultTranscribeOptions()
	opt.Temperatures = []float32{0}
	opt.Language = "en"
	opt.WordTimestamps = true
	got := transcribeUntil(t, f, m, opt, stop)
	want.Text, got.Text = "", ""
	compareResult(t, "longform.json", &want, got, 0.02, 0.1)
}

// shortLongformSeek is where -short stops: after the given number of
// windows; otherwise the whole file.
func shortLongformSeek(segs []Segment, windows int) int {
	if !testing.Short() {
		return 1 << 30
	}
	seen := 0
	last := -1
	for _, s := range segs {
		if s.Seek != last {
			seen++
			last = s.Seek
			if seen == windows+1 {
				return s.Seek
			}
		}
	}
	return 1 << 30
}

func segmentsBefore(segs []Segment, seek int) []Segment {
	var out []Segment
	for _, s := range segs {
		if s.Seek < seek {
			out = append(out, s)
		}
	}
	return out
}

// transcribeUntil transcribes the long-form file, stopping (through the
// context) at the first segment whose window starts at or after stopSeek.
func transcribeUntil(t *testing.T, f *File, m *Model, opt TranscribeOptions, stopSeek int) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var segs []Segment
	opt.OnSegment = func(s Segment) {
		if s.Seek >= stopSeek {
			cancel()
			return
		}
		segs = append(segs, s)
	}
	res, err := f.TranscribeFile(ctx, m, shared.Path(t, "audio", longformAudio), opt)
	if errors.Is(err, context.Canceled) {
		var text string
		for _, s := range segs {
			text += s.Text
		}
		return &Result{Text: text, Segments: segs, Language: "en"}
	}
	require.NoError(t, err)
	return res
}

package whisper

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// refResult is the reference implementation's transcribe() output.
type refResult struct {
	Text     string    `json:"text"`
	Segments []Segment `json:"segments"`
}

// compareResult checks text exactly, tokens exactly, segment times within
// segTol and word times within wordTol.
func compareResult(t *testing.T, name string, want *refResult, got *Result, segTol, wordTol float64) {
	t.Helper()
	require.Equal(t, strings.TrimSpace(want.Text), strings.TrimSpace(got.Text), "%s: text", name)
	require.Len(t, got.Segments, len(want.Segments), "%s: segments", name)
	for i, ws := range want.Segments {
		gs := got.Segments[i]
		require.Equal(t, ws.Tokens, gs.Tokens, "%s: segment %d tokens", name, i)
		require.Equal(t, ws.Seek, gs.Seek, "%s: segment %d seek", name, i)
		require.InDelta(t, ws.Start, gs.Start, segTol, "%s: segment %d start", name, i)
		require.InDelta(t, ws.End, gs.End, segTol, "%s: segment %d end", name, i)
		require.InDelta(t, ws.AvgLogprob, gs.AvgLogprob, 1e-3, "%s: segment %d avg_logprob", name, i)
		require.InDelta(t, ws.NoSpeechProb, gs.NoSpeechProb, 1e-4, "%s: segment %d no_speech_prob", name, i)
		require.InDelta(t, ws.CompressionRatio, gs.CompressionRatio, 0.05, "%s: segment %d compression_ratio", name, i)
		if wordTol > 0 {
			require.Len(t, gs.Words, len(ws.Words), "%s: segment %d words", name, i)
			for j, ww := range ws.Words {
				gw := gs.Words[j]
				require.Equal(t, ww.Word, gw.Word, "%s: segment %d word %d", name, i, j)
				require.InDelta(t, ww.Start, gw.Start, wordTol, "%s: %q start", name, ww.Word)
				require.InDelta(t, ww.End, gw.End, wordTol, "%s: %q end", name, ww.Word)
				require.InDelta(t, ww.Probability, gw.Probability, 1e-3, "%s: %q probability", name, ww.Word)
			}
		}
	}
}

// Every shared clip transcribes greedily (with word timestamps, as the
// reference was run) to the reference's text, tokens and times; the
// default temperature schedule never falls back. The same runs check the
// selection on the backend (see testKitClips).
func TestKitClipsGreedy(t *testing.T) {
	t.Parallel()
	testKitClips(t, "transcribe", 1, 30, 3)
}

// The kit's beam-5 references (4 clips, with word timestamps) match, with
// the beam filters on the backend checked the same way.
func TestKitClipsBeam5(t *testing.T) {
	t.Parallel()
	testKitClips(t, "transcribe-beam5", 5, 4, 1)
}

// testKitClips transcribes each clip with a reference in refDir (n of
// them; short with -short) twice: with the filters and the choice on the
// backend (PassSelect, PassFilterBeams) and on the host (Model.hostSelect,
// the reference for them). The two results must be equal bit for bit
// (tokens, times, words, log-probabilities, fallback temperatures), and
// the backend's must match the reference: text and tokens exactly,
// segment times within 0.02 s, word times within 0.1 s, the temperature
// (0: greedy or beam search, no fallback) exactly. Each clip is a
// parallel subtest; the second run restores the first's encoder passes
// (encodeMemo): the two differ only in how they decode. (The passes are
// shared with the file's other tests, kitMemoEncodes: the first run may
// restore the stream test's last window or the greedy run's too.)
func testKitClips(t *testing.T, refDir string, beams, n, short int) {
	refs, err := filepath.Glob(filepath.Join(shared.Dir(t), "whisper-kit", "reference", refDir, "*.json"))
	require.NoError(t, err)
	require.Len(t, refs, n, "the kit's %s references", refDir)
	if testing.Short() {
		refs = refs[:short]
	}
	opt := DefaultTranscribeOptions()
	opt.WordTimestamps = true
	opt.Language = "en"
	opt.BeamSize = beams
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testKitClip(t, ref, name, beams, opt)
		})
	}
}

// testKitClip is one clip of testKitClips.
func testKitClip(t *testing.T, ref, name string, beams int, opt TranscribeOptions) {
	f, m := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", beams)
	memo := kitMemoEncodes(t, m, "ggml-kit-tiny.en-f16.bin")
	run := func(host bool) *Result {
		m.hostSelect = host
		defer func() { m.hostSelect = false }()
		r, err := f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", name+".wav"), opt)
		require.NoError(t, err, name)
		return r
	}
	onHost, got := run(true), run(false)
	require.NotEmpty(t, onHost.Segments, name)
	require.Positive(t, memo.hits, "%s: the backend's run encoded again", name)
	require.Equal(t, onHost, got, "%s: the backend's selection differs from the host's", name)
	var want refResult
	readJSON(t, ref, &want)
	compareResult(t, name, &want, got, 0.02, 0.1)
	for i, ws := range want.Segments {
		require.Equal(t, ws.Temperature, got.Segments[i].Temperature, "%s: segment %d temperature", name, i)
	}
}

func TestSubtitleFormats(t *testing.T) {
	r := &Result{Text: " a b", Segments: []Segment{
		{Start: 0, End: 1.5, Text: " Hello --> world"},
		{Start: 3599.9996, End: 3725.25, Text: " Second."},
		{Start: 4, End: 4, Text: ""},
	}}
	var b strings.Builder
	require.NoError(t, Write(&b, r, FormatSRT))
	require.Equal(t, "1\n00:00:00,000 --> 00:00:01,500\nHello -> world\n\n2\n01:00:00,000 --> 01:02:05,250\nSecond.\n\n", b.String())
	b.Reset()
	require.NoError(t, Write(&b, r, FormatVTT))
	require.Equal(t, "WEBVTT\n\n00:00.000 --> 00:01.500\nHello -> world\n\n01:00:00.000 --> 01:02:05.250\nSecond.\n\n", b.String())
	b.Reset()
	require.NoError(t, Write(&b, r, FormatTXT))
	require.Equal(t, "Hello --> world\nSecond.\n", b.String())
	require.Error(t, Write(&b, r, "doc"))
}

func TestTranscribeRejectsEmptyAudio(t *testing.T) {
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	_, err := f.TranscribeSamples(context.Background(), m, nil, DefaultTranscribeOptions())
	require.Error(t, err)
	empty := filepath.Join(t.TempDir(), "empty.wav")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = f.TranscribeFile(context.Background(), m, empty, DefaultTranscribeOptions())
	require.Error(t, err)
	_ = math.Pi
}

func TestCompressionRatioMatchesZlib(t *testing.T) {
	// Python: len(t)/len(zlib.compress(t)) = 107/79.
	text := "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
	require.InDelta(t, 107.0/79.0, CompressionRatio(text), 1e-12)
	require.Zero(t, CompressionRatio(""))
	require.Greater(t, CompressionRatio(strings.Repeat("thank you ", 50)), 2.4)
}

func TestRepetitionCut(t *testing.T) {
	const ts = 50363
	thank := []int32{10449, 345, 13} // " Thank you."
	var loop []int32
	for i := range 8 {
		loop = append(loop, ts+int32(2*i))
		loop = append(loop, thank...)
		loop = append(loop, ts+int32(2*i+2))
	}
	prefix := []int32{ts, 843, 523, 616, ts + 50}
	toks := append(append([]int32(nil), prefix...), loop...)
	cut := repetitionCut(toks, ts)
	require.Equal(t, len(prefix)+5, cut, "keeps the first repeat")

	// Speech that repeats a little ("no, no, no") is not a loop.
	require.Equal(t, -1, repetitionCut([]int32{ts, 645, 11, 645, 11, 645, 11, 645, 13}, ts))
	// 24 copies of one token are.
	same := make([]int32, 30)
	for i := range same {
		same[i] = 13
	}
	require.Equal(t, 1, repetitionCut(same, ts))
	require.Equal(t, -1, repetitionCut(nil, ts))
}

// Cancelling the context stops a transcription between windows.
func TestTranscribeCancelled(t *testing.T) {
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.TranscribeFile(ctx, m, shared.Path(t, "audio", "jfk.wav"), DefaultTranscribeOptions())
	require.ErrorIs(t, err, context.Canceled)
}

// whisper.cpp's end-of-audio rule: a sequence is complete at a timestamp t
// with seek + 2t + 10 >= the audio's end (frames of 10 ms).
func TestEndTimestamp(t *testing.T) {
	sp, err := SpecialsFor(51864)
	require.NoError(t, err)
	for _, c := range []struct{ left, want int }{
		{2098, 1044}, // the 204.2-s excerpt's last window (seek 18322 of 20420 frames)
		{2099, 1045},
		{3000, 1495},
		{3009, 1500},
		{5, 0},
	} {
		require.Equal(t, sp.TimestampBegin+int32(c.want), endTimestamp(sp, c.left, 3000, 2), "left %d", c.left)
	}
	require.Zero(t, endTimestamp(sp, 3010, 3000, 2), "a window ending before the audio has no end timestamp")
	require.Zero(t, endTimestamp(sp, 100000, 3000, 2))
}

package whisper

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// whisperCppResult is whisper-cli's full JSON output (-oj -ojf).
type whisperCppResult struct {
	Transcription []struct {
		Text   string `json:"text"`
		Tokens []struct {
			ID int32 `json:"id"`
		} `json:"tokens"`
	} `json:"transcription"`
}

// With the q8_0 model every clip transcribes greedily to the reference
// text (the f16 reference's, which is what the model was trained to emit).
// Each clip is a parallel subtest.
func TestKitClipsQ8(t *testing.T) {
	t.Parallel()
	refs, err := filepath.Glob(filepath.Join(shared.Dir(t), "whisper-kit", "reference", "transcribe", "*.json"))
	require.NoError(t, err)
	require.Len(t, refs, 30)
	if testing.Short() {
		refs = refs[:1] // jfk, also checked against whisper.cpp
	}
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testKitClipQ8(t, ref, name)
		})
	}
}

// testKitClipQ8 is one clip of TestKitClipsQ8.
func testKitClipQ8(t *testing.T, ref, name string) {
	f, m := loadKitBeams(t, "ggml-kit-tiny.en-q8_0.bin", 5)
	memo := kitMemoEncodes(t, m, "ggml-kit-tiny.en-q8_0.bin") // (jfk's beam run below restores the greedy run's encoder pass)
	opt := DefaultTranscribeOptions()
	opt.Temperatures = []float32{0}
	opt.Language = "en"
	var want refResult
	readJSON(t, ref, &want)
	got, err := f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", name+".wav"), opt)
	require.NoError(t, err, name)
	require.Equal(t, strings.TrimSpace(want.Text), strings.TrimSpace(got.Text), name)
	if name != "jfk" {
		return
	}
	// whisper.cpp's own q8_0 run: the same text and text tokens.
	var wc whisperCppResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "whispercpp", "q8_0-cpu-jfk-bs1.json"), &wc)
	require.Len(t, wc.Transcription, 1)
	require.Equal(t, strings.TrimSpace(wc.Transcription[0].Text), strings.TrimSpace(got.Text))
	var wcText []int32
	for _, tk := range wc.Transcription[0].Tokens {
		if tk.ID < 50256 {
			wcText = append(wcText, tk.ID)
		}
	}
	require.Len(t, got.Segments, 1)
	require.Equal(t, wcText, textTokens(got.Segments[0].Tokens, f.Vocab.Specials()))

	// Beam 5: whisper.cpp's q8_0 beam run and openai's f16 one.
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "whispercpp", "q8_0-cpu-jfk-bs5.json"), &wc)
	var beamRef refResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe-beam5", "jfk.json"), &beamRef)
	bopt := opt
	bopt.BeamSize = 5
	hits := memo.hits
	got, err = f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", "jfk.wav"), bopt)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(wc.Transcription[0].Text), strings.TrimSpace(got.Text))
	require.Equal(t, strings.TrimSpace(beamRef.Text), strings.TrimSpace(got.Text))
	require.Equal(t, hits+1, memo.hits, "the beam run encoded again")
}

// The long-form file with q8_0, greedy: every segment's text equals
// whisper.cpp's q8_0 output (which is the trained text, 56 segments).
func TestKitLongformQ8(t *testing.T) {
	t.Parallel()
	var wc whisperCppResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "whispercpp", "q8_0-cpu-longform-bs1.json"), &wc)
	var want refResult
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "longform", "longform-nowords.json"), &want)
	require.Len(t, wc.Transcription, len(want.Segments))
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	opt := DefaultTranscribeOptions()
	opt.Temperatures = []float32{0}
	opt.Language = "en"
	stop := shortLongformSeek(want.Segments, 1)
	got := transcribeUntil(t, f, m, opt, stop)
	n := len(segmentsBefore(want.Segments, stop))
	require.Len(t, got.Segments, n)
	for i := range n {
		require.Equal(t, strings.TrimSpace(wc.Transcription[i].Text), strings.TrimSpace(got.Segments[i].Text), "segment %d", i)
		require.Equal(t, want.Segments[i].Seek, got.Segments[i].Seek, "segment %d seek", i)
	}
}

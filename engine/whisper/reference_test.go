package whisper

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/internal/shared"
)

func readF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Zero(t, len(b)%4)
	return ggml.BytesF32(b)
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// requireClose checks got against want within tol × max|want|.
func requireClose(t *testing.T, want, got []float32, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	var maxRef, maxDiff float64
	worst := 0
	for i := range want {
		maxRef = math.Max(maxRef, math.Abs(float64(want[i])))
		if d := math.Abs(float64(want[i] - got[i])); d > maxDiff || math.IsNaN(d) {
			maxDiff, worst = d, i
		}
	}
	t.Logf("%s: max |diff| %.3g (max |ref| %.3g, relative %.3g)", what, maxDiff, maxRef, maxDiff/maxRef)
	require.LessOrEqual(t, maxDiff, tol*maxRef, "%s: element %d: want %g got %g", what, worst, want[worst], got[worst])
}

// The encoder output and the first decoder steps' logits must match
// openai-whisper's fp32 tensors for the kit model (f16 weights, computed in
// f32) within 1e-4 of the tensor's largest magnitude.
func TestKitEncoderAndLogits(t *testing.T) {
	t.Parallel()
	_, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	dir := shared.Path(t, "whisper-kit", "reference", "tensors")
	mel := readF32(t, dir+"/jfk.mel.f32")
	require.NoError(t, m.Encode(mel))
	enc := make([]float32, m.H.NAudioCtx*m.H.NAudioState)
	require.NoError(t, m.EncoderOutput(enc))
	requireClose(t, readF32(t, dir+"/jfk.encoder-mel.f32"), enc, 1e-4, "encoder output")

	nv := m.H.NVocab
	for _, c := range []struct {
		file   string
		prompt []int32
		fed    []int32
	}{
		{"jfk.logits-notimestamps.f32", []int32{50257, 50362}, []int32{843, 523}},
		{"jfk.logits-timestamps.f32", []int32{50257}, []int32{50363, 843}},
	} {
		want := readF32(t, dir+"/"+c.file)
		logits, err := m.Prompt(c.prompt, 0)
		require.NoError(t, err)
		requireClose(t, want[:nv], logits, 1e-4, c.file+" step 0")
		pos := len(c.prompt)
		for i, tok := range c.fed {
			logits, err = m.Prompt([]int32{tok}, pos)
			require.NoError(t, err)
			requireClose(t, want[(i+1)*nv:(i+2)*nv], logits, 1e-4, c.file+" next step")
			pos++
		}
	}
}

// Greedy decoding of the reference mel gives the reference tokens, with
// and without timestamps.
func TestKitDecodeWindow(t *testing.T) {
	t.Parallel()
	f, m := loadKit(t, "ggml-kit-tiny.en-f16.bin")
	opt := checkKitJFKWindow(t, f, m)
	sp := f.Vocab.Specials()

	// A canceled context stops decoding before the next token.
	// With an end timestamp (the audio's end, TranscribeOptions.StopAtAudioEnd)
	// the sequence stops at the first timestamp at or past it, that
	// timestamp kept: here the reference's opening <|0.00|>. A later end
	// changes nothing (the reference's last timestamp is its last token).
	ref := readKitJFKDecode(t)
	first := ref.WithTimestamps.Tokens[0]
	require.True(t, sp.IsTimestamp(first))
	opt.EndTimestamp = first
	r, err := m.DecodeWindow(opt)
	require.NoError(t, err)
	require.Equal(t, []int32{first}, r.Tokens)
	opt.EndTimestamp = first + 1
	r, err = m.DecodeWindow(opt)
	require.NoError(t, err)
	require.Equal(t, ref.WithTimestamps.Tokens, r.Tokens)
	opt.EndTimestamp = 0

	// The chained window's result does not depend on how often the host
	// reads its track back (a read after every token, after a few, or
	// once at the end), and equals the host decoder's (hostSelect) bit
	// for bit: tokens, log-probabilities, the no-speech probability.
	m.hostSelect = true
	want, err := m.DecodeWindow(opt)
	m.hostSelect = false
	require.NoError(t, err)
	for _, n := range []int{1, 3, 16, 1000} {
		opt.ChainTokens = n
		r, err = m.DecodeWindow(opt)
		require.NoError(t, err)
		require.Equal(t, want, r, "%d tokens a read-back", n)
	}
	opt.ChainTokens = 0

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt.Ctx = ctx
	_, err = m.DecodeWindow(opt)
	require.ErrorIs(t, err, context.Canceled)
}

// The suppression list equals the reference tokenizer's for GPT-2's
// vocabulary (openai-whisper's non_speech_tokens plus control tokens).
func TestDefaultSuppress(t *testing.T) {
	f, err := OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, []int32{220, 50256}, f.Vocab.SuppressBlank())
	require.Equal(t, []int32{1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93,
		357, 366, 438, 532, 685, 705, 796, 930, 1058, 1220, 1267, 1279, 1303, 1343, 1377, 1391, 1635, 1782, 1875,
		2162, 2361, 2488, 3467, 4008, 4211, 4600, 4808, 5299, 5855, 6329, 7203, 9609, 9959, 10563, 10786, 11420,
		11709, 11907, 13163, 13697, 13700, 14808, 15306, 16410, 16791, 17992, 19203, 19510, 20724, 22305, 22935,
		27007, 30109, 30420, 33409, 34949, 40283, 40493, 40549, 47282, 49146, 50257, 50357, 50358, 50359, 50360,
		50361}, f.Vocab.DefaultSuppress())
}

// A beam search ranked on the backend (plan.WhisperBeams, chained) equals
// the host's (hostSelect: each beam's logits read back, plan.BeamsStep)
// bit for bit, however often the host reads the search's state back, with
// and without timestamps, an end timestamp and a patience; a patience
// whose finished sequences the backend has no room for searches on the
// host.
func TestKitDecodeWindowBeams(t *testing.T) {
	t.Parallel()
	f, m := loadKitBeams(t, "ggml-kit-tiny.en-f16.bin", 5)
	require.NoError(t, m.Encode(readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))))
	sp := f.Vocab.Specials()
	base := DecodeOptions{MaxInitialTimestamp: 1, SuppressBlank: []int32{220, sp.EOT}, BeamSize: 5,
		Suppress: []int32{sp.Translate, sp.Transcribe, sp.SOT, sp.SOTPrev, sp.SOTLM, sp.NoSpeech}}
	cases := map[string]func(o *DecodeOptions){
		"timestamps":    func(*DecodeOptions) {},
		"text":          func(o *DecodeOptions) { o.WithoutTimestamps = true },
		"end timestamp": func(o *DecodeOptions) { o.EndTimestamp = sp.TimestampBegin + 150 },
		"patience 2":    func(o *DecodeOptions) { o.Patience = 2 },
		"patience 3":    func(o *DecodeOptions) { o.Patience = 3 },
		"3 beams":       func(o *DecodeOptions) { o.BeamSize = 3 },
	}
	for name, set := range cases {
		opt := base
		set(&opt)
		m.hostSelect = true
		want, err := m.DecodeWindow(opt)
		m.hostSelect = false
		require.NoError(t, err, name)
		require.NotEmpty(t, want.Tokens, name)
		for _, n := range []int{1, 16, 1000} {
			opt.ChainTokens = n
			r, err := m.DecodeWindow(opt)
			require.NoError(t, err, name)
			require.Equal(t, want, r, "%s: %d steps a read-back", name, n)
		}
	}
}

// kitJFKDecode is the reference's greedy decoding of jfk's window.
type kitJFKDecode struct {
	WithoutTimestamps struct {
		Tokens       []int32 `json:"tokens"`
		Text         string  `json:"text"`
		AvgLogprob   float64 `json:"avg_logprob"`
		NoSpeechProb float64 `json:"no_speech_prob"`
	} `json:"without_timestamps"`
	WithTimestamps struct {
		Tokens     []int32 `json:"tokens"`
		AvgLogprob float64 `json:"avg_logprob"`
	} `json:"with_timestamps"`
}

func readKitJFKDecode(t *testing.T) kitJFKDecode {
	var ref kitJFKDecode
	readJSON(t, shared.Path(t, "whisper-kit", "reference", "decode", "jfk.json"), &ref)
	return ref
}

// checkKitJFKWindow encodes the reference mel of jfk and checks m's greedy
// window, without and then with timestamps, against the reference; it
// returns the options of the second (timestamps on).
func checkKitJFKWindow(t *testing.T, f *File, m *Model) DecodeOptions {
	t.Helper()
	ref := readKitJFKDecode(t)
	require.NoError(t, m.Encode(readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", "jfk.mel.f32"))))
	sp := f.Vocab.Specials()
	opt := DecodeOptions{MaxInitialTimestamp: 1, SuppressBlank: []int32{220, sp.EOT},
		Suppress: []int32{sp.Translate, sp.Transcribe, sp.SOT, sp.SOTPrev, sp.SOTLM, sp.NoSpeech}}

	opt.WithoutTimestamps = true
	r, err := m.DecodeWindow(opt)
	require.NoError(t, err)
	require.Equal(t, ref.WithoutTimestamps.Tokens, r.Tokens)
	require.Equal(t, ref.WithoutTimestamps.Text, f.Vocab.Decode(r.Tokens)[1:])
	require.InDelta(t, ref.WithoutTimestamps.AvgLogprob, r.AvgLogprob, 1e-4)
	require.InDelta(t, ref.WithoutTimestamps.NoSpeechProb, r.NoSpeechProb, 1e-6)

	opt.WithoutTimestamps = false
	r, err = m.DecodeWindow(opt)
	require.NoError(t, err)
	require.Equal(t, ref.WithTimestamps.Tokens, r.Tokens)
	require.InDelta(t, ref.WithTimestamps.AvgLogprob, r.AvgLogprob, 1e-4)
	return opt
}

// TestKitDecodeWindowWorkers is TestKitDecodeWindow's reference check on 8
// and 16 workers, where a token's 6 cross-attention heads are fewer than
// the workers and take the one-job split (engine/cpu attendWide's runs,
// issue #37), whose output is the softmax's to rounding, not the 1-worker
// path's bits: the tokens, the text and the log-probabilities stay the
// reference's.
func TestKitDecodeWindowWorkers(t *testing.T) {
	for _, workers := range []int{8, 16} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			f, err := OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"))
			require.NoError(t, err)
			defer f.Close()
			be := cpu.New(cpu.Options{Threads: workers})
			defer be.Close()
			m, err := f.Load(be, Options{})
			require.NoError(t, err)
			defer m.Close()
			checkKitJFKWindow(t, f, m)
		})
	}
}

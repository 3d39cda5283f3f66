package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

var benchRow = regexp.MustCompile(`^\| (\S+) (\S+) (\S+) \| ([\d.]+) MiB \| ([\d.]+) M \| CPU \| (\d+) \| (\w+(?: @ d\d+)?) \| ([\d.]+) ± ([\d.]+) \| ([\d.]+|-) \|$`)

// TestBenchLLM runs `hark bench llm` on one-layer SmolLM2-shaped files:
// one table row per file and test with positive speeds; the files are
// kept in --dir and reused by the next run.
func TestBenchLLM(t *testing.T) {
	dir := t.TempDir()
	args := []string{"bench", "llm", "--layers", "1", "--pp", "16", "--tg", "4", "-r", "2", "--type", "q8_0,q4_0", "--dir", dir,
		"--tokenizer", shared.Path(t, "llm-kit", "tokenizers", "smollm2")}
	out, errOut, err := runHark(t, args...)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(errOut, "writing "))
	require.Contains(t, errOut, "load average")
	// pp runs as one batch of pp tokens, and its memory is reported.
	require.Len(t, regexp.MustCompile(`plan: prefill batch 16 tokens, context 16; weights [\d.]+ MiB, scratch [\d.]+ MiB, state [\d.]+ MiB`).FindAllString(errOut, -1), 2, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2+4, out)
	want := []struct{ typ, test string }{{"Q8_0", "pp16"}, {"Q8_0", "tg4"}, {"Q4_0", "pp16"}, {"Q4_0", "tg4"}}
	for i, w := range want {
		m := benchRow.FindStringSubmatch(lines[2+i])
		require.NotNil(t, m, "row %q", lines[2+i])
		require.Equal(t, "llama", m[1])
		require.Equal(t, w.typ, m[3])
		require.Equal(t, "2", m[6])
		require.Equal(t, w.test, m[7])
		v, err := strconv.ParseFloat(m[8], 64)
		require.NoError(t, err)
		require.Greater(t, v, 0.0)
		if w.test[:2] == "pp" {
			require.Equal(t, "-", m[10], "no bandwidth for a prompt batch")
		} else {
			requireBandwidth(t, m, 0)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)

	_, errOut, err = runHark(t, args...)
	require.NoError(t, err)
	require.NotContains(t, errOut, "writing ", "existing files are reused")
}

// requireBandwidth checks a tg row's GB/s: the weight bytes a token reads
// (at least want, when given) times tok/s.
func requireBandwidth(t *testing.T, m []string, want int64) {
	t.Helper()
	toks, err := strconv.ParseFloat(m[8], 64)
	require.NoError(t, err)
	gbs, err := strconv.ParseFloat(m[10], 64)
	require.NoError(t, err)
	require.Greater(t, gbs, 0.0)
	if want > 0 {
		require.InDelta(t, float64(want)*toks/1e9, gbs, 0.051+1e-3*gbs, "GB/s = bytes per token × tok/s")
	}
}

// --shape llama-1b writes Llama-3.2-1B-shaped layers (one here) with the
// tied output in q8_0, says where llama.cpp would pick Q6_K, and --depth
// measures after cached tokens, with the bandwidth of the bytes a token
// reads.
func TestBenchLLMShapeDepth(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runHark(t, "bench", "llm", "--shape", "llama-1b", "--layers", "1", "--depth", "8", "--pp", "4", "--tg", "2", "-r", "1",
		"--type", "q4_0", "--dir", dir, "--tokenizer", shared.Path(t, "llm-kit", "tokenizers", "smollm2"))
	require.NoError(t, err)
	require.Contains(t, errOut, "Q6_K")
	path := filepath.Join(dir, "llama-1b-shape-v1-L1-q4_0.gguf")
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	requireKey(t, f, "llama.embedding_length", 2048)
	requireKey(t, f, "llama.feed_forward_length", 8192)
	requireKey(t, f, "llama.attention.head_count", 32)
	requireKey(t, f, "llama.attention.head_count_kv", 8)
	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	require.Equal(t, ggml.Q8_0, emb.Type)
	require.Equal(t, []int64{2048, 49152}, emb.Shape)
	var all int64
	for _, tn := range f.Tensors {
		all += tn.Bytes
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")[2:]
	require.Len(t, rows, 2, out)
	m := benchRow.FindStringSubmatch(rows[0])
	require.NotNil(t, m, rows[0])
	require.Equal(t, "pp4 @ d8", m[7])
	m = benchRow.FindStringSubmatch(rows[1])
	require.NotNil(t, m, rows[1])
	require.Equal(t, "tg2 @ d8", m[7])
	require.Equal(t, "Q4_0", m[3])
	requireBandwidth(t, m, all)
}

func requireKey(t *testing.T, f *gguf.File, key string, want int64) {
	t.Helper()
	v, err := f.GetInt(key)
	require.NoError(t, err)
	require.Equal(t, want, v, key)
}

func TestBenchLLMModelFlag(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	out, _, err := runHark(t, "bench", "llm", "--model", model, "--pp", "32", "--tg", "0", "-r", "1")
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(out), "\n")[2:]
	require.Len(t, rows, 1)
	require.Regexp(t, `^\| llama 0M F32 \| .* \| pp32 \| `, rows[0])
}

// --chain --temp samples the chained tg as a chat request does, at the
// context --ctx loads (as hark serve's).
func TestBenchLLMChainTemp(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	out, _, err := runHark(t, "bench", "llm", "--model", model, "--pp", "0", "--tg", "4", "--chain", "--temp", "0.7", "--ctx", "256", "-r", "1")
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(out), "\n")[2:]
	require.Len(t, rows, 2)
	require.Regexp(t, `^\| llama 0M F32 \| .* \| tg4 \| `, rows[0])
	require.Regexp(t, `^\| llama 0M F32 \| .* \| tg4 chained temp 0.7 \| `, rows[1])
	// --depth: after a chat prompt's worth of cached tokens
	out, _, err = runHark(t, "bench", "llm", "--model", model, "--pp", "0", "--tg", "4", "--chain", "--depth", "8", "-r", "1")
	require.NoError(t, err)
	rows = strings.Split(strings.TrimSpace(out), "\n")[2:]
	require.Len(t, rows, 2)
	require.Regexp(t, `^\| llama 0M F32 \| .* \| tg4 @ d8 \| `, rows[0])
	require.Regexp(t, `^\| llama 0M F32 \| .* \| tg4 chained @ d8 \| `, rows[1])
}

func TestBenchLLMErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runHark(t, "bench", "llm", "--type", "q5_k", "--dir", dir, "--layers", "1")
	require.ErrorContains(t, err, `unknown --type "q5_k"`)
	_, _, err = runHark(t, "bench", "llm", "--shape", "llama-70b", "--dir", dir)
	require.ErrorContains(t, err, `unknown --shape "llama-70b" (llama-1b, smollm2-135m)`)
	_, _, err = runHark(t, "bench", "llm", "--depth", "-1")
	require.ErrorContains(t, err, "--depth")
	_, _, err = runHark(t, "bench", "llm", "--temp", "0.7")
	require.ErrorContains(t, err, "--temp takes --chain")
	_, _, err = runHark(t, "bench", "llm", "--chain", "--temp", "3")
	require.ErrorContains(t, err, "--temp takes --chain")
	_, _, err = runHark(t, "bench", "llm", "--ctx", "-1")
	require.ErrorContains(t, err, "--ctx")
	_, _, err = runHark(t, "bench", "llm", "--model", shared.Path(t, "models", "stories260K.gguf"), "--pp", "32", "--tg", "0", "--ctx", "16")
	require.ErrorContains(t, err, "--ctx 16 is below the 32 tokens")
	_, _, err = runHark(t, "bench", "llm", "-r", "0")
	require.ErrorContains(t, err, "--reps")
	_, _, err = runHark(t, "bench", "llm", "--pp", "0", "--tg", "0")
	require.ErrorContains(t, err, "--pp")
	_, _, err = runHark(t, "bench", "llm", "--model", filepath.Join(dir, "none.gguf"))
	require.Error(t, err)
	_, _, err = runHark(t, "bench", "llm", "--model", shared.Path(t, "models", "stories260K.gguf"), "--pp", "4096", "--tg", "0")
	require.Error(t, err)
}

var whisperRow = regexp.MustCompile(`^\| ggml-kit-tiny\.en-q8_0\.bin \| CPU \| 1 \| (encode \(per window\)|decode \(per token\)|greedy window \(per token, \d+ a window(?:, read every \d+)?\)|word alignment \(per window, \d+ tokens\)) \| ([\d.]+) \| ([\d.]+) \|$`)

// hark bench whisper: on the kit's q8_0 model by default, one row for the
// encoder (ms per window), one for the decoder (ms per token) and one for
// a greedy window (ms per token chosen: jfk.wav's 27 and the end of text)
// and one for a window's word alignment (ms per window), each with every
// repetition's sample.
func TestBenchWhisper(t *testing.T) {
	shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin") // fails loudly when the kit is missing
	// The run called directly, its output in buffers.
	e, outBuf, errBuf := testEnv(t, "", "")
	o := &BenchWhisperOptions{IOStreams: e.IOStreams, Backend: "cpu", Threads: 1, Reps: 2, Tokens: 3, Chain: 16}
	require.NoError(t, runBenchWhisper(o.Out, o.ErrOut, o))
	out, errOut := outBuf.String(), errBuf.String()
	rows := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, rows, 6, out)
	for i, test := range []string{"encode (per window)", "decode (per token)", "greedy window (per token, 28 a window, read every 16)", "word alignment (per window, 3 tokens)"} {
		m := whisperRow.FindStringSubmatch(rows[2+i])
		require.NotNil(t, m, rows[2+i])
		require.Equal(t, test, m[1])
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		require.Greater(t, v, 0.0)
		require.Regexp(t, `samples `+regexp.QuoteMeta(test)+` ms: [\d.]+ [\d.]+\n`, errOut)
	}

	for _, bad := range [][]string{{"-r", "0"}, {"--tokens", "0"}, {"--tokens", "448"}, {"--chain-tokens", "-1"}, {"-t", "0"}, {"--backend", "tpu"}, {"--model", filepath.Join(t.TempDir(), "none.bin")}} {
		_, _, err := runHark(t, append([]string{"bench", "whisper", "--backend", "cpu"}, bad...)...)
		require.Error(t, err, "%v", bad)
	}
}

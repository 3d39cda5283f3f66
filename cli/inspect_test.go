package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// runHark runs the CLI in-process and returns stdout, stderr and the error.
func runHark(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

type inspectOutput struct {
	Format       string         `json:"format"`
	Architecture string         `json:"architecture"`
	Metadata     map[string]any `json:"metadata"`
	Tensors      []struct {
		Name   string  `json:"name"`
		Type   string  `json:"type"`
		Shape  []int64 `json:"shape"`
		Offset int64   `json:"offset"`
		Bytes  int64   `json:"bytes"`
	} `json:"tensors"`
}

// inspect runs `hark inspect --json` and decodes exactly one object.
func inspectFile(t *testing.T, path string) (inspectOutput, map[string]json.RawMessage) {
	t.Helper()
	out, _, err := runHark(t, "inspect", "--json", path)
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(out))
	var raw map[string]json.RawMessage
	require.NoError(t, dec.Decode(&raw))
	require.False(t, dec.More(), "exactly one JSON object")
	var v inspectOutput
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	return v, raw
}

func typeCounts(v inspectOutput) map[string]int {
	m := map[string]int{}
	for _, t := range v.Tensors {
		m[t.Type]++
	}
	return m
}

func TestInspectWhisper(t *testing.T) {
	for _, c := range []struct {
		file   string
		ftype  float64
		counts map[string]int
	}{
		{"ggml-kit-tiny.en-f16.bin", 1, map[string]int{"f16": 67, "f32": 100}},
		{"ggml-kit-tiny.en-q8_0.bin", 2007, map[string]int{"q8_0": 65, "f16": 2, "f32": 100}},
	} {
		path := shared.Path(t, "whisper-kit", "models", c.file)
		v, raw := inspectFile(t, path)
		require.Len(t, raw, 4)
		require.Equal(t, "ggml", v.Format)
		require.Equal(t, "whisper", v.Architecture)
		require.Len(t, v.Tensors, 167)
		require.Equal(t, c.counts, typeCounts(v))
		require.EqualValues(t, 51864, v.Metadata["whisper.n_vocab"])
		require.EqualValues(t, 384, v.Metadata["whisper.n_audio_state"])
		require.EqualValues(t, 80, v.Metadata["whisper.n_mels"])
		require.EqualValues(t, c.ftype, v.Metadata["whisper.ftype"])
		require.Equal(t, []any{80.0, 201.0}, v.Metadata["whisper.mel_filters.shape"])
		require.EqualValues(t, 50256, v.Metadata["tokenizer.tokens"])
		// Tensors are stored back to back, the first right after the header.
		for i := 1; i < len(v.Tensors); i++ {
			p, q := v.Tensors[i-1], v.Tensors[i]
			require.Equal(t, p.Offset+p.Bytes+int64(12+4*len(q.Shape)+len(q.Name)), q.Offset, q.Name)
		}
		emb := v.Tensors[len(v.Tensors)-1]
		for _, tt := range v.Tensors {
			if tt.Name == "decoder.token_embedding.weight" {
				emb = tt
			}
		}
		require.Equal(t, []int64{384, 51864}, emb.Shape)

		out, _, err := runHark(t, "inspect", path)
		require.NoError(t, err)
		for _, want := range []string{"format:        ggml (whisper.cpp)", "architecture:  whisper",
			"whisper.n_text_layer", "stored tokens  50256", "tensors: 167", "decoder.token_embedding.weight"} {
			require.Contains(t, out, want)
		}
	}
}

func TestInspectStories(t *testing.T) {
	path := shared.Path(t, "models", "stories260K.gguf")
	v, raw := inspectFile(t, path)
	require.Len(t, raw, 4)
	require.Equal(t, "gguf", v.Format)
	require.Equal(t, "llama", v.Architecture)
	require.Len(t, v.Tensors, 48)
	require.Equal(t, map[string]int{"f32": 48}, typeCounts(v))
	require.EqualValues(t, 64, v.Metadata["llama.embedding_length"])
	require.Equal(t, map[string]any{"type": "string", "len": 512.0}, v.Metadata["tokenizer.ggml.tokens"])
	require.Equal(t, "token_embd.weight", v.Tensors[0].Name)
	require.Equal(t, []int64{64, 512}, v.Tensors[0].Shape)
	require.EqualValues(t, 131072, v.Tensors[0].Bytes)
	require.Zero(t, v.Tensors[0].Offset%32)
	var down bool
	for _, tt := range v.Tensors {
		if tt.Name == "blk.3.ffn_down.weight" {
			require.Equal(t, []int64{172, 64}, tt.Shape)
			down = true
		}
	}
	require.True(t, down)

	out, stderr, err := runHark(t, "inspect", path)
	require.NoError(t, err)
	require.Empty(t, stderr)
	for _, want := range []string{"format:        gguf (version 3, alignment 32)", "architecture:  llama",
		"llama.block_count", "vocabulary   512", "special ids  bos=1 eos=2 unknown=0", "tensors: 48",
		"token_embd.weight", "[64, 512]", "total: 48 tensors (f32 48), 292800 elements, 1171200 bytes"} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "<s>", "the vocabulary itself is not printed")
}

func TestInspectVocabOnly(t *testing.T) {
	for file, want := range map[string]struct {
		arch  string
		vocab float64
	}{"ggml-vocab-llama-spm.gguf": {"llama", 32000}, "ggml-vocab-phi-3.gguf": {"phi3", 32064}} {
		path := shared.Path(t, "llm-kit", "gguf-vocab", file)
		v, raw := inspectFile(t, path)
		require.Len(t, raw, 4)
		require.JSONEq(t, "[]", string(raw["tensors"]), "tensors is an empty list")
		require.Equal(t, "gguf", v.Format)
		require.Equal(t, want.arch, v.Architecture)
		require.Equal(t, map[string]any{"type": "string", "len": want.vocab}, v.Metadata["tokenizer.ggml.tokens"])

		out, _, err := runHark(t, "inspect", path)
		require.NoError(t, err)
		require.Contains(t, out, "tensors: 0")
		require.Regexp(t, `\n  model +llama\n`, out)
		require.Less(t, len(out), 4000, "no vocabulary dump")
	}
}

func TestInspectRefuses(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"stories260K.llama2c.bin", "(llama2.c checkpoint?)"},
		{"tok512.llama2c.bin", "(llama2.c tokenizer?)"},
	} {
		path := shared.Path(t, "models", c.file)
		for _, args := range [][]string{{"inspect", path}, {"inspect", "--json", path}} {
			out, _, err := runHark(t, args...)
			require.Error(t, err)
			require.Empty(t, out)
			msg := err.Error()
			require.NotContains(t, msg, "\n", "one-line error")
			require.Contains(t, msg, "not a GGUF or whisper.cpp GGML model file "+c.want)
		}
	}
	_, _, err := runHark(t, "inspect", filepath.Join(t.TempDir(), "missing.gguf"))
	require.ErrorContains(t, err, "no such file")
	_, _, err = runHark(t, "inspect")
	require.Error(t, err)
	require.NotZero(t, Execute([]string{"inspect", shared.Path(t, "models", "tok512.llama2c.bin")}))
}

// TestHostileTemplateReported: a GGUF whose chat template nests 100,000
// parentheses (parsing it would overflow the stack and kill the process)
// is reported by `hark inspect` (text and JSON) and `hark models import`,
// which still imports it (completions work); an honest template parses.
func TestHostileTemplateReported(t *testing.T) {
	stories := shared.Path(t, "models", "stories260K.gguf")
	deep := "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}"
	hostile := withChatTemplate(t, stories, deep)
	out, _, err := runHark(t, "inspect", hostile)
	require.NoError(t, err)
	require.Contains(t, out, "chat template  200007 bytes, UNUSABLE: chat: parsing the gguf template: it nests too deeply")
	out, _, err = runHark(t, "inspect", "--json", hostile)
	require.NoError(t, err)
	require.Contains(t, out, `"chat_template_error": "chat: parsing the gguf template: it nests too deeply`)

	honest := withChatTemplate(t, stories, "{{ messages[0].content }}")
	out, _, err = runHark(t, "inspect", honest)
	require.NoError(t, err)
	require.Contains(t, out, "chat template  25 bytes, parses")

	dir := filepath.Join(t.TempDir(), "models")
	out, errs, code := runCLI(t, "models", "--models-dir", dir, "import", hostile)
	require.Zero(t, code, errs)
	require.Equal(t, "templated\n", out)
	require.Contains(t, errs, "warning: templated's chat template is unusable")
	require.Contains(t, errs, "nests too deeply")
	require.NoError(t, os.Remove(filepath.Join(dir, "templated.gguf")))
	_, errs, code = runCLI(t, "models", "--models-dir", dir, "import", honest)
	require.Zero(t, code, errs)
	require.NotContains(t, errs, "warning")
}

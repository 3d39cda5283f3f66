package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

var benchRow = regexp.MustCompile(`^\| (\S+) (\S+) (\S+) \| ([\d.]+) MiB \| ([\d.]+) M \| CPU \| (\d+) \| (\w+) \| ([\d.]+) ± ([\d.]+) \|$`)

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
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)

	_, errOut, err = runHark(t, args...)
	require.NoError(t, err)
	require.NotContains(t, errOut, "writing ", "existing files are reused")
}

func TestBenchLLMModelFlag(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	out, _, err := runHark(t, "bench", "llm", "--model", model, "--pp", "32", "--tg", "0", "-r", "1")
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(out), "\n")[2:]
	require.Len(t, rows, 1)
	require.Regexp(t, `^\| llama 0M F32 \| .* \| pp32 \| `, rows[0])
}

func TestBenchLLMErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runHark(t, "bench", "llm", "--type", "q5_k", "--dir", dir, "--layers", "1")
	require.ErrorContains(t, err, `unknown --type "q5_k"`)
	_, _, err = runHark(t, "bench", "llm", "-r", "0")
	require.ErrorContains(t, err, "--reps")
	_, _, err = runHark(t, "bench", "llm", "--pp", "0", "--tg", "0")
	require.ErrorContains(t, err, "--pp")
	_, _, err = runHark(t, "bench", "llm", "--model", filepath.Join(dir, "none.gguf"))
	require.Error(t, err)
	_, _, err = runHark(t, "bench", "llm", "--model", shared.Path(t, "models", "stories260K.gguf"), "--pp", "4096", "--tg", "0")
	require.Error(t, err)
}

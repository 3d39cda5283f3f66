package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/serve"
	"github.com/stretchr/testify/require"
)

var benchServeRow = regexp.MustCompile(`^\| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$`)

// TestBenchServe runs `hark bench serve` against a real server on
// stories260K: one row per level, the prompt calibrated to the asked
// length, every request generating exactly --max-tokens (ignore_eos),
// positive speeds and ordered percentiles.
func TestBenchServe(t *testing.T) {
	url := serveStories(t, shared.Path(t, "models", "stories260K.gguf"), 1)

	out, errOut, err := runHark(t, "bench", "serve", "--url", url, "--model", "stories", "--concurrency", "1,3",
		"--prompt-tokens", "24", "--max-tokens", "20", "--requests", "2")
	require.NoError(t, err, errOut)
	require.Contains(t, errOut, "load average")
	require.NotContains(t, errOut, "note:", "stories260K's prompt calibrates exactly")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2+2, out)
	for i, c := range []int{1, 3} {
		m := benchServeRow.FindStringSubmatch(lines[2+i])
		require.NotNil(t, m, "row %q", lines[2+i])
		num := func(j int) float64 {
			v, err := strconv.ParseFloat(m[j], 64)
			require.NoError(t, err)
			return v
		}
		require.Equal(t, float64(c), num(1))
		require.Equal(t, float64(2*c), num(2), "requests")
		require.Equal(t, 24.0, num(3), "prompt tokens")
		require.Equal(t, float64(2*c*20), num(4), "generated: exactly max-tokens each")
		require.Greater(t, num(6), 0.0)
		require.Greater(t, num(8), 0.0, "a first token takes a round trip")
		require.LessOrEqual(t, num(8), num(9), "TTFT p50 <= p95")
		// stories260K's tokens can come faster than the column's 0.01 ms.
		require.LessOrEqual(t, num(10), num(11), "token p50 <= p95")
	}

	_, _, err = runHark(t, "bench", "serve", "--url", url, "--model", "nope", "--concurrency", "1")
	require.ErrorContains(t, err, "404")
}

// serveStories serves a models folder holding model as "stories" on a
// loopback listener, returning its URL.
func serveStories(t *testing.T, model string, threads int) string {
	dir := t.TempDir()
	b, err := os.ReadFile(model)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stories.gguf"), b, 0o644))
	st, err := models.Open(dir)
	require.NoError(t, err)
	s, err := serve.New(serve.Config{Store: st, Threads: threads})
	require.NoError(t, err)
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs.URL
}

// --per-token against a real server: the requests ask for logprobs, every
// chunk carries them (a chunk without fails the level), and each request's
// --token-trace line holds its 20 tokens' arrivals (its first, then one a
// token). stories260K's chunks carry a token each here; loadgen's
// TestPerTokenGaps covers a chunk of two.
func TestBenchServePerToken(t *testing.T) {
	url := serveStories(t, shared.Path(t, "models", "stories260K.gguf"), 1)
	trace := filepath.Join(t.TempDir(), "tokens.log")
	out, errOut, err := runHark(t, "bench", "serve", "--url", url, "--model", "stories", "--concurrency", "2",
		"--prompt-tokens", "24", "--max-tokens", "20", "--per-token", "--token-trace", trace)
	require.NoError(t, err, errOut)
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 3, out)
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2, "a line a request")
	for _, l := range lines {
		f := strings.Fields(l)
		require.Equal(t, "tokens", f[0])
		require.Len(t, f[2:], 20, "an arrival a token: %s", l)
	}
}

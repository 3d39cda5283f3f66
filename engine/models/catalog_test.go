package models

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestCatalogWellFormed(t *testing.T) {
	c := Catalog()
	require.GreaterOrEqual(t, len(c), 40)
	seen := map[string]bool{}
	tasks := map[Task]int{}
	for _, e := range c {
		require.NoError(t, ValidateName(e.Name), e.Name)
		require.False(t, seen[e.Name], "duplicate %s", e.Name)
		seen[e.Name] = true
		require.Contains(t, []Task{Transcribe, Chat}, e.Task, e.Name)
		tasks[e.Task]++
		u, err := url.Parse(e.URL)
		require.NoError(t, err, e.Name)
		require.Equal(t, "https", u.Scheme, e.Name)
		require.Equal(t, "huggingface.co", u.Host, e.Name)
		require.Contains(t, u.Path, "/resolve/main/", e.Name)
		require.Positive(t, e.MemoryMB, e.Name)
		require.NotEmpty(t, e.Notes, e.Name)
		require.GreaterOrEqual(t, e.Size, int64(0), e.Name)
		if e.SHA256 != "" {
			require.Regexp(t, hex64, e.SHA256, e.Name)
			require.True(t, e.Verified())
			require.NotEmpty(t, e.Source, "%s: a pinned digest needs its source", e.Name)
			require.Positive(t, e.Size, e.Name)
		} else {
			require.False(t, e.Verified())
			require.Contains(t, e.Notes, "unverified", e.Name)
		}
		if e.Size > 0 {
			require.NotEmpty(t, e.Source, "%s: a pinned size needs its source", e.Name)
		}
		if e.License != nil {
			require.NotEmpty(t, e.License.Name, e.Name)
			require.Regexp(t, `^https://`, e.License.URL, e.Name)
			require.Contains(t, e.Notes, "licence", e.Name)
		}
		if e.Task == Transcribe {
			require.Regexp(t, `/ggerganov/whisper\.cpp/resolve/main/ggml-[a-z0-9.-]+(-q[58]_[01])?\.bin$`, e.URL)
		} else {
			require.Regexp(t, `\.gguf$`, e.URL)
		}
	}
	for _, n := range []string{"whisper-tiny", "whisper-tiny.en", "whisper-base.en-q5_1", "whisper-small-q8_0",
		"whisper-medium.en-q5_0", "whisper-large-v3", "whisper-large-v3-q5_0", "whisper-large-v3-turbo",
		"qwen2.5-0.5b-instruct-q4_k_m", "qwen3-4b-q8_0", "llama-3.2-3b-instruct-q4_k_m", "smollm2-360m-instruct-q8_0"} {
		require.True(t, seen[n], n)
	}
	require.Equal(t, 29, tasks[Transcribe])
	require.Equal(t, 23, tasks[Chat])
	e, ok := Lookup("whisper-base.en")
	require.True(t, ok)
	require.Equal(t, int64(147964211), e.Size)
	_, ok = Lookup("nope")
	require.False(t, ok)
	_, err := parseCatalog([]byte("{"))
	require.Error(t, err)
}

func TestRecommend(t *testing.T) {
	s, c := Recommend(1 << 30) // 1 GiB: a small Whisper, no chat model
	require.Equal(t, "whisper-base-q8_0", s.Name)
	require.Empty(t, c.Name)
	s, c = Recommend(2 << 30)
	require.Equal(t, "whisper-small-q8_0", s.Name)
	require.Equal(t, "qwen3-0.6b-q4_k_m", c.Name)
	s, c = Recommend(24 << 30)
	require.Equal(t, "whisper-large-v3-q5_0", s.Name)
	require.Equal(t, "qwen3-4b-q4_k_m", c.Name)
	s, c = Recommend(64 << 20)
	require.Empty(t, s.Name)
	require.Empty(t, c.Name)
	// More memory never recommends a smaller model.
	prevS, prevC := 0, 0
	for gb := int64(1); gb <= 64; gb++ {
		s, c := Recommend(gb << 30)
		require.GreaterOrEqual(t, s.MemoryMB, prevS)
		require.GreaterOrEqual(t, c.MemoryMB, prevC)
		prevS, prevC = s.MemoryMB, c.MemoryMB
	}
}

// TestGemmaLicence: the Gemma 3 entries carry Google's terms, and a
// download is refused until they are accepted; recommendations never pick
// an entry that needs a licence prompt.
func TestGemmaLicence(t *testing.T) {
	for _, n := range []string{"gemma-3-270m-it-q8_0", "gemma-3-1b-it-q4_k_m", "gemma-3-1b-it-q8_0"} {
		e, ok := Lookup(n)
		require.True(t, ok, n)
		require.NotNil(t, e.License, n)
		require.Equal(t, "Gemma Terms of Use", e.License.Name)
		var le *LicenseError
		require.ErrorAs(t, e.CheckLicense(false), &le, n)
		require.Contains(t, le.Error(), "https://ai.google.dev/gemma/terms")
		require.NoError(t, e.CheckLicense(true))
	}
	e, _ := Lookup("qwen2.5-0.5b-instruct-q4_k_m")
	require.NoError(t, e.CheckLicense(false), "no licence, nothing to accept")
	for _, ram := range []int64{2e9, 4e9, 8e9, 16e9, 64e9} {
		_, chat := Recommend(ram)
		require.Nil(t, chat.License, "%d: %s", ram, chat.Name)
	}
}

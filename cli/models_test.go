package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
)

func TestModelsImportListPathRm(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	stories := shared.Path(t, "models", "stories260K.gguf")
	kit := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")

	out, errs, code := runCLI(t, "models", "--models-dir", dir, "import", stories)
	require.Zero(t, code, errs)
	require.Equal(t, "stories260K\n", out)
	out, errs, code = runCLI(t, "models", "import", "--models-dir", dir, kit)
	require.Zero(t, code, errs)
	require.Equal(t, "ggml-kit-tiny.en-q8_0\n", out)

	_, errs, code = runCLI(t, "models", "import", "--models-dir", dir, shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-llama-spm.gguf"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "vocabulary-only GGUF")
	_, errs, code = runCLI(t, "models", "import", "--models-dir", dir, shared.Path(t, "models", "stories260K.llama2c.bin"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not a GGUF or whisper.cpp GGML model file")

	out, errs, code = runCLI(t, "models", "list", "--models-dir", dir)
	require.Zero(t, code, errs)
	require.Regexp(t, `(?m)^stories260K\s+chat\s+1 MB\s+imported`, out)
	require.Regexp(t, `(?m)^ggml-kit-tiny\.en-q8_0\s+transcribe\s+.*imported`, out)
	require.Regexp(t, `(?m)^whisper-base\.en\s+transcribe\s+148 MB\s+available\s+sha256`, out)
	require.Regexp(t, `(?m)^qwen3-4b-q8_0\s+chat\s+\?\s+available\s+unverified`, out)
	require.Contains(t, errs, "models folder: "+dir)
	require.Regexp(t, `recommended for dictation: \S+: .*estimated for`, errs, "speech advice from this machine's estimated speed")
	out, _, code = runCLI(t, "models", "list", "--installed", "--models-dir", dir)
	require.Zero(t, code)
	require.Equal(t, 3, strings.Count(out, "\n"), out) // header + 2

	t.Setenv("HARK_MODELS", dir)
	out, _, code = runCLI(t, "models", "path")
	require.Zero(t, code)
	require.Equal(t, dir+"\n", out)
	out, _, code = runCLI(t, "models", "path", "stories260K")
	require.Zero(t, code)
	require.Equal(t, filepath.Join(dir, "stories260K.gguf")+"\n", out)
	// The imported name works with --model.
	out, errs, code = runCLI(t, "generate", "--model", "stories260K", "--temp", "0", "-n", "8", "Once upon a time")
	require.Zero(t, code, errs)
	require.Contains(t, out, ", there was a little girl")

	_, errs, code = runCLI(t, "models", "rm", "stories260K")
	require.Zero(t, code, errs)
	require.Contains(t, errs, "removed stories260K")
	_, errs, code = runCLI(t, "models", "path", "stories260K")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "no such model")
	_, errs, code = runCLI(t, "models", "rm", "../etc")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not a valid model name")
}

// hfServer serves body under a Hugging Face-like path and records Range
// headers.
type hfServer struct {
	path   string
	body   []byte
	mu     sync.Mutex
	ranges []string
}

func (h *hfServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.path {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	h.ranges = append(h.ranges, r.Header.Get("Range"))
	h.mu.Unlock()
	http.ServeContent(w, r, "f", time.Time{}, strings.NewReader(string(h.body)))
}

func TestModelsPullFromMirror(t *testing.T) {
	body, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	// An unverified catalog entry served by a local mirror: stories260K
	// stands in for the real file.
	srv := &hfServer{path: "/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf", body: body}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	const name = "qwen2.5-0.5b-instruct-q4_k_m"

	// A partial left by a killed pull of an unverified entry is not
	// trusted: the pull starts over (a resumed file's hash could be a
	// splice's, and it would be recorded as the truth).
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".partial"), body[:400_000], 0o644))
	out, errs, code := runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Zero(t, code, errs)
	require.Equal(t, name+"\n", out)
	require.Equal(t, []string{""}, srv.ranges)
	require.Contains(t, errs, "100%")
	require.Contains(t, errs, "hash will be recorded")
	got, err := os.ReadFile(filepath.Join(dir, name+".gguf"))
	require.NoError(t, err)
	require.Equal(t, body, got)

	out, _, code = runCLI(t, "models", "list", "--models-dir", dir, "--installed")
	require.Zero(t, code)
	require.Regexp(t, `(?m)^`+name+`\s+chat\s+1 MB\s+installed\s+recorded`, out)

	_, errs, code = runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Zero(t, code, errs)
	require.Contains(t, errs, "already installed")

	// `models rm` keeps the recorded hash: a re-pull of a changed file is
	// refused. --forget (even after the removal) trusts the next pull anew.
	_, errs, code = runCLI(t, "models", "rm", "--models-dir", dir, name)
	require.Zero(t, code, errs)
	changed, err := os.ReadFile(withChatTemplate(t, shared.Path(t, "models", "stories260K.gguf"), "{{ messages }}"))
	require.NoError(t, err)
	srv.body = changed
	_, errs, code = runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "sha256")
	require.NoFileExists(t, filepath.Join(dir, name+".gguf"))
	_, errs, code = runCLI(t, "models", "rm", "--forget", "--models-dir", dir, name)
	require.Zero(t, code, errs)
	require.Contains(t, errs, "forgot the recorded sha256 of "+name)
	_, errs, code = runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Zero(t, code, errs)
	got, err = os.ReadFile(filepath.Join(dir, name+".gguf"))
	require.NoError(t, err)
	require.Equal(t, changed, got)
	srv.body = body

	// HARK_MIRROR works too; a verified entry whose file differs from the
	// catalog is refused and nothing is installed.
	t.Setenv("HARK_MIRROR", ts.URL)
	srv.path = "/ggerganov/whisper.cpp/resolve/main/ggml-tiny.en.bin"
	_, errs, code = runCLI(t, "models", "pull", "--models-dir", dir, "whisper-tiny.en")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "the catalog says 77704715")
	_, err = os.Stat(filepath.Join(dir, "whisper-tiny.en.bin"))
	require.ErrorIs(t, err, os.ErrNotExist)

	_, errs, code = runCLI(t, "models", "pull", "--models-dir", dir, "no-such-model")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not in the catalog")
}

// TestModelsPullLicence: a model under a licence is refused without
// --accept-license (its name and address are printed, nothing is fetched)
// and downloads with it.
func TestModelsPullLicence(t *testing.T) {
	body, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	srv := &hfServer{path: "/ggml-org/gemma-3-270m-it-GGUF/resolve/main/gemma-3-270m-it-Q8_0.gguf", body: body}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	const name = "gemma-3-270m-it-q8_0"

	_, errs, code := runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, name)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "Gemma Terms of Use (https://ai.google.dev/gemma/terms)")
	require.Contains(t, errs, "--accept-license")
	require.Empty(t, srv.ranges, "nothing was fetched")

	out, errs, code := runCLI(t, "models", "pull", "--models-dir", dir, "--mirror", ts.URL, "--accept-license", name)
	require.Zero(t, code, errs)
	require.Equal(t, name+"\n", out)
	got, err := os.ReadFile(filepath.Join(dir, name+".gguf"))
	require.NoError(t, err)
	require.Equal(t, body, got)
}

// `models list` recommends speech models by the machine's estimated speed
// before any is installed: small ones on a 2-core AVX2 machine without a
// GPU (never large-v3, which memory alone allows), large ones with a GPU.
func TestModelsListAdvice(t *testing.T) {
	slow := adviceText(models.Machine{Cores: 2, SIMD: "avx2"}, 24<<30)
	require.Contains(t, slow, "recommended for dictation: whisper-base-q5_1: ")
	require.Contains(t, slow, "recommended for files: whisper-small-q5_1: ")
	require.Contains(t, slow, "estimated for cpu (2 cores, AVX2, no GPU)")
	require.NotContains(t, slow, "whisper-large")
	require.NotContains(t, slow, "whisper-medium")
	fast := adviceText(models.Machine{Cores: 16, SIMD: "avx512", GPU: "cuda"}, 64<<30)
	require.Contains(t, fast, "recommended for dictation: whisper-large-v3-q5_0: ")
	require.Contains(t, fast, "recommended chat model for 68.7 GB of memory: ")
}

// The models runs called directly: the folder and the streams come from
// their options.
func TestModelsRunsDirect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	e, out, errOut := testEnv(t, dir, "")
	require.NoError(t, runModelsImport(&ModelsOptions{Env: e, Names: []string{shared.Path(t, "models", "stories260K.gguf")}}))
	require.Equal(t, "stories260K\n", out.String())
	out.Reset()
	require.NoError(t, runModelsPath(&ModelsOptions{Env: e, Names: []string{"stories260K"}}))
	require.Equal(t, filepath.Join(dir, "stories260K.gguf")+"\n", out.String())
	out.Reset()
	require.NoError(t, runModelsList(&ModelsOptions{Env: e, Installed: true}))
	require.Regexp(t, `(?m)^stories260K\s+chat\s+1 MB\s+imported`, out.String())
	require.Contains(t, errOut.String(), "models folder: "+dir)
	out.Reset()
	require.NoError(t, runModelsRm(&ModelsOptions{Env: e, Names: []string{"stories260K"}}))
	require.Contains(t, errOut.String(), "removed stories260K")
	require.NoError(t, runModelsList(&ModelsOptions{Env: e, Installed: true}))
	require.Equal(t, 1, strings.Count(out.String(), "\n"), "the header only: %s", out)
}

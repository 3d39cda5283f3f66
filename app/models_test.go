package app

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func findModel(list []ModelInfo, name string) (ModelInfo, bool) {
	for _, m := range list {
		if m.Name == name {
			return m, true
		}
	}
	return ModelInfo{}, false
}

func TestModelsImportListRemove(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), t.TempDir(), ev)

	list, err := a.Models.List()
	require.NoError(t, err)
	tiny, ok := findModel(list, "whisper-tiny.en")
	require.True(t, ok, "the catalog is listed")
	require.False(t, tiny.Installed)
	require.Equal(t, "transcribe", tiny.Task)
	require.True(t, tiny.InCatalog)

	_, err = a.Files.Add(shared.Path(t, "audio", "jfk.wav"), "")
	require.ErrorContains(t, err, "no speech")

	name, err := a.Files.Import(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	require.Equal(t, "ggml-kit-tiny.en-q8_0", name)
	_, err = a.Files.Import(shared.Path(t, "models", "stories260K.llama2c.bin"))
	require.Error(t, err, "not a model Hark runs")
	_, err = a.Files.Import(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)

	list, err = a.Models.List()
	require.NoError(t, err)
	kit, ok := findModel(list, name)
	require.True(t, ok)
	require.True(t, kit.Installed)
	require.False(t, kit.InCatalog)
	require.Equal(t, "transcribe", kit.Task)
	require.Equal(t, int64(43550778), kit.SizeBytes)
	st, ok := findModel(list, "stories260K")
	require.True(t, ok)
	require.Equal(t, "chat", st.Task)

	// The imported model transcribes; it shows as loaded afterwards.
	job, err := a.Files.Add(shared.Path(t, "audio", "jfk.wav"), "")
	require.NoError(t, err)
	d := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == job.ID }, 60*time.Second).(Job)
	require.Equal(t, kitText(t, "jfk"), d.Text)
	list, _ = a.Models.List()
	kit, _ = findModel(list, name)
	require.True(t, kit.Loaded)

	require.NoError(t, a.Models.Remove(name))
	require.Empty(t, a.rt.Loaded(), "a removed model is unloaded")
	list, _ = a.Models.List()
	_, ok = findModel(list, name)
	require.False(t, ok)
	require.Error(t, a.Models.Remove(name))
	require.Error(t, a.Models.Remove("../hark.db"))
}

// slowMirror serves a model file in small pieces, slowly, so a pull can
// be canceled midway; ranges are honoured for the resume.
type slowMirror struct {
	path string
	body []byte
	slow atomic.Bool
}

func (m *slowMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != m.path {
		http.NotFound(w, r)
		return
	}
	if !m.slow.Load() {
		http.ServeContent(w, r, "f", time.Time{}, strings.NewReader(string(m.body)))
		return
	}
	w.Header().Set("Content-Length", "1048576")
	w.WriteHeader(http.StatusOK)
	for i := 0; i < 1024; i++ {
		if _, err := w.Write(m.body[i*1024 : (i+1)*1024]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestModelsPullCancel(t *testing.T) {
	body, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	require.Greater(t, len(body), 1<<20)
	// An unverified catalog entry, served by a local mirror with
	// stories260K standing in for the real file.
	const name = "qwen2.5-0.5b-instruct-q4_k_m"
	mirror := &slowMirror{path: "/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf", body: body}
	mirror.slow.Store(true)
	ts := httptest.NewServer(mirror)
	defer ts.Close()
	t.Setenv("HARK_MIRROR", ts.URL)
	ev := newEvents()
	mdir := t.TempDir()
	a := openApp(t, t.TempDir(), mdir, ev)

	require.Error(t, a.Models.Pull("no-such-model", false))
	require.NoError(t, a.Models.Pull(name, false))
	require.Error(t, a.Models.Pull(name, false), "already downloading")
	ev.wait(t, "models:progress", func(d any) bool { return d.(PullProgress).Done > 0 }, 10*time.Second)
	list, _ := a.Models.List()
	m, _ := findModel(list, name)
	require.True(t, m.Downloading)
	require.NoError(t, a.Models.Cancel(name))
	done := ev.wait(t, "models:done", nil, 10*time.Second).(PullDone)
	require.Equal(t, "canceled", done.Error)
	_, err = os.Stat(filepath.Join(mdir, name+".gguf"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing half-downloaded is installed")
	require.Error(t, a.Models.Cancel(name))

	// Pull again: it completes, and the model chats.
	mirror.slow.Store(false)
	require.NoError(t, a.Models.Pull(name, false))
	n := 0
	done = ev.wait(t, "models:done", func(any) bool { n++; return n == 2 }, 30*time.Second).(PullDone)
	require.Empty(t, done.Error)
	got, err := os.ReadFile(done.Path)
	require.NoError(t, err)
	require.Equal(t, body, got)
	list, _ = a.Models.List()
	m, _ = findModel(list, name)
	require.True(t, m.Installed)
	require.False(t, m.Downloading)
	out, err := a.Chat.Cleanup("hello", "Fix.")
	require.NoError(t, err)
	require.NotEmpty(t, out)
}

// TestModelsPullLicence: a model published under a licence (Gemma 3) lists
// it, is refused until the user accepts it, and downloads once accepted.
func TestModelsPullLicence(t *testing.T) {
	body, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	const name = "gemma-3-270m-it-q8_0"
	mirror := &slowMirror{path: "/ggml-org/gemma-3-270m-it-GGUF/resolve/main/gemma-3-270m-it-Q8_0.gguf", body: body}
	ts := httptest.NewServer(mirror)
	defer ts.Close()
	t.Setenv("HARK_MIRROR", ts.URL)
	ev := newEvents()
	a := openApp(t, t.TempDir(), t.TempDir(), ev)

	list, err := a.Models.List()
	require.NoError(t, err)
	m, ok := findModel(list, name)
	require.True(t, ok)
	require.NotNil(t, m.License)
	require.Equal(t, "Gemma Terms of Use", m.License.Name)

	err = a.Models.Pull(name, false)
	require.ErrorContains(t, err, "Gemma Terms of Use")
	require.ErrorContains(t, err, "accept it before downloading")
	list, _ = a.Models.List()
	m, _ = findModel(list, name)
	require.False(t, m.Downloading, "nothing started")

	require.NoError(t, a.Models.Pull(name, true))
	done := ev.wait(t, "models:done", nil, 30*time.Second).(PullDone)
	require.Empty(t, done.Error)
	got, err := os.ReadFile(done.Path)
	require.NoError(t, err)
	require.Equal(t, body, got)
}

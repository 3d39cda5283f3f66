package app

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/backends/backendstest"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/internal/shared"
)

// The API server started from Settings uses the app's model cache: an API
// transcription and a dictation share one loaded instance.
func TestServerSharesTheAppsModels(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	st, err := a.Server.Start("127.0.0.1:0")
	require.NoError(t, err)
	status, body := postAudio(t, st.URL+"/v1/audio/transcriptions", "kit", shared.Path(t, "audio", "jfk.wav"))
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "ask not")

	jfk, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav"), samples: jfk})
	require.NoError(t, a.Dictation.Start())
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, "kit", it.Model)
	kit, _, err := a.Models.resolveSpeech("kit")
	require.NoError(t, err)
	require.Equal(t, 1, a.rt.Loads(kit), "one load for the API request and the dictation")
	require.Len(t, a.rt.Loaded(), 1)
}

// With a GPU driver (the fake Metal), the app runs models on it as the CLI
// does (cli's TestAutoPicksTheGPU), shows it in Models, and ForceCPU
// moves later loads to the CPU.
func TestAppUsesTheRuntimeBackend(t *testing.T) {
	gpu := backendstest.FakeGPU(t, backends.Metal)
	a := openApp(t, t.TempDir(), testModelsDir(t), nil)
	// The advice's machine (runtime.ThisMachine) asks the drivers once per
	// process: whether that first ask falls in this test (one more open of
	// the fake GPU) depended on which tests ran before it (-run). Only the
	// model loads are counted here.
	a.Models.deps.machine = func(string) models.Machine { return models.Machine{Cores: 2, SIMD: "avx2", GPU: backends.Metal} }
	_, err := a.Chat.Cleanup("hello there", "Fix.")
	require.NoError(t, err)
	require.Equal(t, 1, gpu.N())
	list, err := a.Models.List()
	require.NoError(t, err)
	m, ok := findModel(list, "stories")
	require.True(t, ok)
	require.True(t, m.Loaded)
	require.Equal(t, "metal", m.Backend)

	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.ForceCPU = true
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	_, err = a.Chat.Cleanup("hello there", "Fix.")
	require.NoError(t, err)
	list, err = a.Models.List()
	require.NoError(t, err)
	m, _ = findModel(list, "stories")
	require.Equal(t, "cpu", m.Backend)
	require.Equal(t, 1, gpu.N())
}

// A dictation started during a long file job runs between two of the
// job's 30-s windows instead of after the whole file.
func TestDictationDuringFileJob(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	job, err := a.Files.Add(shared.Path(t, "audio", "ljspeech-longform-LJ001-0021-0076.wav"), "kit") // 6.5 min
	require.NoError(t, err)
	ev.wait(t, "transcription:progress", func(d any) bool { p := d.(Progress); return p.ID == job.ID && p.Segment != nil }, 120*time.Second)

	windows := func() int { // windows the job has finished so far
		n := 0
		for _, d := range ev.named("transcription:progress") {
			if p := d.(Progress); p.ID == job.ID && p.Segment == nil && p.Progress > 0 {
				n++
			}
		}
		return n
	}
	jfk, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	a.SetRecorder(&clipRecorder{clip: shared.Path(t, "audio", "jfk.wav"), samples: jfk})
	before := windows()
	require.NoError(t, a.Dictation.Start())
	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, kitText(t, "jfk"), strings.TrimSpace(it.Text))
	require.LessOrEqual(t, windows()-before, 1, "the dictation waited for at most the window in progress")
	require.Empty(t, ev.named("transcription:done"), "the job is still running")
	require.NoError(t, a.Transcription.Cancel(job.ID))
}

// postAudio posts file to an audio endpoint as multipart form data.
func postAudio(t *testing.T, url, model, file string) (int, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	require.NoError(t, mw.WriteField("model", model))
	fw, err := mw.CreateFormFile("file", filepath.Base(file))
	require.NoError(t, err)
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	fw.Write(src)
	require.NoError(t, mw.Close())
	resp, err := http.Post(url, mw.FormDataContentType(), &b)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// At first start the app measures one encoder window of the smallest
// installed speech model (the kit, tiny's shape), keeps it in the settings
// and recommends per task from it: never large-v3 on the CPU.
func TestSpeedProbeAndAdvice(t *testing.T) {
	ev := newEvents()
	a, err := New(Config{DataDir: t.TempDir(), ModelsDir: testModelsDir(t), Emitter: ev, Threads: 2})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	ev.wait(t, "models:changed", func(d any) bool { return d.(ModelsChange).Probed != "" }, 120*time.Second)
	s, err := a.Settings.Get()
	require.NoError(t, err)
	require.NotNil(t, s.SpeedProbe)
	require.Equal(t, SpeedProbe{Probe: models.Probe{Model: "kit", Params: 39_000_000, Backend: "cpu", WindowMs: s.SpeedProbe.WindowMs}, Choice: "auto"}, *s.SpeedProbe)
	require.Positive(t, s.SpeedProbe.WindowMs)

	adv, err := a.Models.Advice()
	require.NoError(t, err)
	require.NotEmpty(t, adv.Dictation)
	require.NotEmpty(t, adv.Files)
	require.NotContains(t, adv.Dictation, "large")
	require.Contains(t, adv.DictWhy, "on cpu")
	list, err := a.Models.List()
	require.NoError(t, err)
	m, _ := findModel(list, adv.Dictation)
	require.Contains(t, m.RecommendedFor, "dictation")
	require.Equal(t, adv.DictWhy, m.Why["dictation"])
	large, _ := findModel(list, "whisper-large-v3")
	require.Empty(t, large.RecommendedFor)
	require.Positive(t, large.WindowMs)

	// The UI saving settings without the measurement keeps it.
	s.SpeedProbe = nil
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	s, err = a.Settings.Get()
	require.NoError(t, err)
	require.NotNil(t, s.SpeedProbe)
}

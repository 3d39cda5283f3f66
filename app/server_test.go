package app

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func TestServerStartStop(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	st, err := a.Server.Status()
	require.NoError(t, err)
	require.False(t, st.Running)

	st, err = a.Server.Start("127.0.0.1:0")
	require.NoError(t, err)
	require.True(t, st.Running)
	require.NotEqual(t, "127.0.0.1:0", st.Addr, "the real port is shown")
	require.Equal(t, "http://"+st.Addr, st.URL)
	got, err := a.Server.Status()
	require.NoError(t, err)
	require.Equal(t, st, got)

	resp, err := http.Get(st.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The server lists the app's models folder.
	resp, err = http.Get(st.URL + "/v1/models")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	require.NoError(t, json.Unmarshal(body, &list), string(body))
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	require.ElementsMatch(t, []string{"kit", "stories"}, ids)

	st, err = a.Server.Stop()
	require.NoError(t, err)
	require.False(t, st.Running)
	cl := http.Client{Timeout: 2 * time.Second}
	_, err = cl.Get(got.URL + "/health")
	require.Error(t, err, "nothing listens after Stop")
	require.NotEmpty(t, ev.named("server:status"))

	// Other machines can't be let in without an API key.
	st, err = a.Server.Start("0.0.0.0:0")
	require.Error(t, err)
	require.False(t, st.Running)
	require.NotEmpty(t, st.Error)
}

func TestServerAutoStart(t *testing.T) {
	data, mdir := t.TempDir(), testModelsDir(t)
	a := openApp(t, data, mdir, nil)
	s, err := a.Settings.Get()
	require.NoError(t, err)
	s.ServerAutoStart = true
	s.ServerAddr = "127.0.0.1:0"
	_, err = a.Settings.Update(s)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	b := openApp(t, data, mdir, nil)
	st, err := b.Server.Status()
	require.NoError(t, err)
	require.True(t, st.Running, st.Error)
	resp, err := http.Get(st.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, b.Close())
	_, err = (&http.Client{Timeout: 2 * time.Second}).Get(st.URL + "/health")
	require.Error(t, err, "Close stops the server")
}

// The in-app server takes its audio-length bound from Settings: an upload
// longer than it is refused with the limit named, before its model time
// is spent.
func TestServerMaxAudioSetting(t *testing.T) {
	a := openApp(t, t.TempDir(), testModelsDir(t), newEvents())
	set, err := a.Settings.Get()
	require.NoError(t, err)
	for _, bad := range []int{-1, 24*60 + 1} {
		s := set
		s.ServerMaxAudioMinutes = bad
		_, err := a.Settings.Update(s)
		require.ErrorContains(t, err, "serverMaxAudioMinutes")
	}
	set.ServerMaxAudioMinutes = 1
	_, err = a.Settings.Update(set)
	require.NoError(t, err)
	st, err := a.Server.Start("127.0.0.1:0")
	require.NoError(t, err)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "longform.wav")
	require.NoError(t, err)
	wav, err := os.ReadFile(shared.Path(t, "audio", "ljspeech-longform-LJ001-0021-0076.wav")) // 6.5 minutes
	require.NoError(t, err)
	_, err = fw.Write(wav)
	require.NoError(t, err)
	require.NoError(t, mw.WriteField("model", "kit"))
	require.NoError(t, mw.Close())
	resp, err := http.Post(st.URL+"/v1/audio/transcriptions", mw.FormDataContentType(), &body)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	require.Contains(t, string(b), "limit of 1m0s")
}

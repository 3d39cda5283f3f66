package app

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

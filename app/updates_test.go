package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The update check asks nothing of the network until the user turns it
// on, then reads the feed at most once a day, and keeps the answer across
// restarts. (The feed parsing, signatures and downloads are tested in
// package update.)
func TestUpdatesConsentAndDaily(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"tag_name": "v99.0.0", "name": "Hark 99", "body": "notes", "html_url": "http://x/rel"})
	}))
	defer srv.Close()
	t.Setenv(EnvUpdateFeed, srv.URL)
	dir := t.TempDir()
	var events atomic.Int32
	em := EmitterFunc(func(name string, _ any) {
		if name == "update:available" {
			events.Add(1)
		}
	})
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	u := newUpdates(dir, em)
	u.now = func() time.Time { return now }

	st := u.State()
	require.False(t, st.Asked)
	require.False(t, st.Enabled)
	u.maybeCheck(context.Background())
	_, err := u.CheckNow()
	require.Error(t, err, "no check before consent")
	require.Zero(t, hits.Load(), "no request before the user agreed")

	st, err = u.SetEnabled(true)
	require.NoError(t, err)
	require.True(t, st.Asked)
	require.EqualValues(t, 1, hits.Load(), "turning it on checks once")
	require.NotNil(t, st.Available)
	require.Equal(t, "99.0.0", st.Available.Version)
	require.EqualValues(t, 1, events.Load())

	now = now.Add(23 * time.Hour)
	u.maybeCheck(context.Background())
	require.EqualValues(t, 1, hits.Load(), "at most once a day")
	now = now.Add(time.Hour)
	u.maybeCheck(context.Background())
	require.EqualValues(t, 2, hits.Load(), "again after a day")

	// The answer and the finding survive a restart.
	u2 := newUpdates(dir, em)
	st = u2.State()
	require.True(t, st.Asked)
	require.True(t, st.Enabled)
	require.NotNil(t, st.Available)

	st, err = u2.SetEnabled(false)
	require.NoError(t, err)
	require.True(t, st.Asked)
	require.Nil(t, st.Available)
	u2.now = func() time.Time { return now.Add(48 * time.Hour) }
	u2.maybeCheck(context.Background())
	require.EqualValues(t, 2, hits.Load(), "off means no requests")
	_, err = u2.Download("Hark.dmg")
	require.Error(t, err)
}

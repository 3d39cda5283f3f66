package models

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noInstall: the download failed and left neither a model nor a partial
// that a later run would trust.
func noInstall(t *testing.T, s *Store, name string) {
	t.Helper()
	list, err := s.List()
	require.NoError(t, err)
	require.Empty(t, list, "a model was installed")
	require.NoFileExists(t, filepath.Join(s.Dir, name+".gguf"))
}

// endless streams zeros forever, chunked (no Content-Length).
func endless(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 64<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
}

func TestDownloadEndlessBody(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(endless))
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	// No size anywhere: refused before a byte is written.
	_, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf"}, nil)
	require.ErrorContains(t, err, "Content-Length")
	noInstall(t, s, "m")
	// The catalog's size: cut there.
	_, err = newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", Size: 3 << 20, SHA256: sha(nil)}, nil)
	require.ErrorContains(t, err, "more than the")
	noInstall(t, s, "m")
	require.NoFileExists(t, s.partialPath("m"))
}

// changing serves body v1 first, then (from the second request on) v2 of
// the same length, as a file replaced on the server between attempts;
// the first response breaks off midway. etag adds strong ETags.
type changing struct {
	v1, v2  []byte
	etag    bool
	n       atomic.Int32
	ifRange []string
}

func (c *changing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.n.Add(1)
	body, tag := c.v1, `"v1"`
	if n > 1 {
		body, tag = c.v2, `"v2"`
	}
	c.ifRange = append(c.ifRange, r.Header.Get("If-Range"))
	if c.etag {
		w.Header().Set("ETag", tag)
	}
	if n == 1 {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	http.ServeContent(w, r, "f.gguf", timeZero, bytesReader(body))
}

func TestDownloadChangedFile(t *testing.T) {
	v1 := stories(t)
	v2 := append([]byte(nil), v1...)
	v2[len(v2)-100] ^= 0xff // the second half differs
	for _, etag := range []bool{true, false} {
		srv := &changing{v1: v1, v2: v2, etag: etag}
		ts := httptest.NewServer(srv)
		s := &Store{Dir: t.TempDir()}
		// The catalog's published hash is v1's: a splice of v1's first half
		// and v2's second half must never install.
		_, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(v1), Size: int64(len(v1))}, nil)
		require.ErrorIs(t, err, ErrHashMismatch, "etag=%v", etag)
		noInstall(t, s, "m")
		require.NoFileExists(t, s.partialPath("m"))
		if etag {
			require.Equal(t, `"v1"`, srv.ifRange[1], "the resume names the first response's ETag")
		}
		ts.Close()
	}
	// No published hash: the partial is never resumed, so the hash
	// recorded (trust on first use) is of one whole file, never a splice.
	srv := &changing{v1: v1, v2: v2}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	p, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf"}, nil)
	require.NoError(t, err)
	got, _ := os.ReadFile(p)
	require.Equal(t, sha(v2), sha(got), "the whole of the current file, not half of each")
	rec, ok := s.RecordedHash("m")
	require.True(t, ok)
	require.Equal(t, sha(v2), rec.SHA256)
}

func TestDownloadWrongContent(t *testing.T) {
	page := []byte("<html>Rate limited. Try again later.</html>")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "f.gguf", timeZero, bytesReader(page))
	}))
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	// Unverified entry: the hash would be recorded, but the file is no model.
	_, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf"}, nil)
	require.ErrorContains(t, err, "not a usable model")
	noInstall(t, s, "m")
	require.NoFileExists(t, s.partialPath("m"))
	_, ok := s.RecordedHash("m")
	require.False(t, ok, "no hash recorded for a file that is not a model")
	// A Whisper .bin name with a GGUF inside is refused too.
	body := stories(t)
	ts2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "f.bin", timeZero, bytesReader(body))
	}))
	defer ts2.Close()
	_, err = newDL(1).Download(context.Background(), s, Request{Name: "w", URL: ts2.URL + "/f.bin", SHA256: sha(body)}, nil)
	require.ErrorContains(t, err, "not a usable model")
	require.NoFileExists(t, filepath.Join(s.Dir, "w.bin"))
}

var timeZero = time.Time{}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// server serves body at /f.gguf. mode shapes its misbehaviour:
// "ok" (http.ServeContent, with Range), "norange" (200 and the whole body
// always), "drop" (the first response stops after cut bytes and closes the
// connection), "corrupt" (one byte flipped), "slow" (a trickle).
type server struct {
	body     []byte
	mode     string
	cut      int
	requests atomic.Int32
	ranges   []string
	mu       sync.Mutex
	inflight atomic.Int32
	peak     atomic.Int32
	release  chan struct{}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.mu.Unlock()
	cur := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		p := s.peak.Load()
		if cur <= p || s.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	switch s.mode {
	case "ok":
		http.ServeContent(w, r, "f.gguf", time.Time{}, strings.NewReader(string(s.body)))
	case "norange":
		w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
		w.WriteHeader(http.StatusOK)
		w.Write(s.body)
	case "drop":
		if n == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
			w.WriteHeader(http.StatusOK)
			w.Write(s.body[:s.cut])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		http.ServeContent(w, r, "f.gguf", time.Time{}, strings.NewReader(string(s.body)))
	case "corrupt":
		b := append([]byte(nil), s.body...)
		b[len(b)/2] ^= 0xff
		http.ServeContent(w, r, "f.gguf", time.Time{}, strings.NewReader(string(b)))
	case "stall":
		// The first connection sends its headers and s.cut bytes, then
		// nothing until the client gives up.
		if n == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
			w.Header().Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusOK)
			w.Write(s.body[:s.cut])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "f.gguf", time.Time{}, strings.NewReader(string(s.body)))
	case "hold":

		w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
		w.WriteHeader(http.StatusOK)
		w.Write(s.body[:10])
		w.(http.Flusher).Flush()
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		w.Write(s.body[10:])
	}
}

func stories(t *testing.T) []byte {
	b, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	return b
}

func newDL(parallel int) *Downloader {
	d := NewDownloader(parallel)
	d.Mirror = ""
	d.Every = 0
	return d
}

func TestDownloadVerifies(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "ok"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: filepath.Join(t.TempDir(), "new")}
	var last Progress
	calls := 0
	p, err := newDL(2).Download(context.Background(), s, Request{Name: "stories", URL: ts.URL + "/f.gguf", SHA256: sha(body), Size: int64(len(body))},
		func(pr Progress) { last = pr; calls++ })
	require.NoError(t, err)
	require.Equal(t, filepath.Join(s.Dir, "stories.gguf"), p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, body, got)
	require.Greater(t, calls, 0)
	require.Equal(t, int64(len(body)), last.Bytes)
	require.Equal(t, int64(len(body)), last.Total)
	require.Greater(t, last.Rate, 0.0)
	require.NoFileExists(t, s.partialPath("stories"))
	// The downloaded model is usable by name.
	r, err := s.Resolve("stories")
	require.NoError(t, err)
	require.Equal(t, p, r)
}

func TestDownloadResumesAfterDrop(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "drop", cut: 300_000}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	p, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, sha(body), sha(got))
	require.Equal(t, []string{"", "bytes=300000-"}, srv.ranges)
}

// A partial left by an interrupted run (a killed process) is resumed by
// the next one.
func TestDownloadResumesPartialFile(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "ok"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	require.NoError(t, os.WriteFile(s.partialPath("m"), body[:123_456], 0o644))
	p, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.NoError(t, err)
	got, _ := os.ReadFile(p)
	require.Equal(t, body, got)
	require.Equal(t, []string{"bytes=123456-"}, srv.ranges)
}

func TestDownloadServerIgnoresRange(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "norange"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	// A partial of garbage: were it appended to, the hash would fail.
	require.NoError(t, os.WriteFile(s.partialPath("m"), make([]byte, 5000), 0o644))
	p, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.NoError(t, err)
	got, _ := os.ReadFile(p)
	require.Equal(t, body, got)
	require.Equal(t, []string{"bytes=5000-"}, srv.ranges)
}

func TestDownloadHashMismatch(t *testing.T) {
	body := stories(t)
	ts := httptest.NewServer(&server{body: body, mode: "corrupt"})
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	_, err := newDL(1).Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.ErrorIs(t, err, ErrHashMismatch)
	require.Contains(t, err.Error(), "deleted")
	require.NoFileExists(t, s.partialPath("m"))
	_, err = s.Path("m")
	require.ErrorIs(t, err, ErrNotFound)
}

// Without a published hash the first download records its hash, and a later
// download that differs is refused.
func TestDownloadRecordsUnknownHash(t *testing.T) {
	body := stories(t)
	ts := httptest.NewServer(&server{body: body, mode: "ok"})
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	d := newDL(1)
	_, err := d.Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/f.gguf"}, nil)
	require.NoError(t, err)
	rec, ok := s.RecordedHash("m")
	require.True(t, ok)
	require.Equal(t, sha(body), rec.SHA256)
	require.Equal(t, int64(len(body)), rec.Size)

	// Removed the way `hark models rm` does: the pin stays.
	require.NoError(t, s.Remove("m"))
	bad := httptest.NewServer(&server{body: body, mode: "corrupt"})
	defer bad.Close()
	_, err = d.Download(context.Background(), s, Request{Name: "m", URL: bad.URL + "/f.gguf"}, nil)
	require.ErrorIs(t, err, ErrHashMismatch)
}

func TestDownloadCancel(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "hold", release: make(chan struct{})}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer close(srv.release)
	s := &Store{Dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := newDL(1).Download(ctx, s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)},
			func(p Progress) {
				if p.Bytes > 0 {
					select {
					case started <- struct{}{}:
					default:
					}
				}
			})
		errc <- err
	}()
	<-started
	cancel()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(shared.Wait(t, 10*time.Second)):
		t.Fatal("download did not stop on cancel")
	}
	// The partial stays for a later resume; no model appears.
	require.FileExists(t, s.partialPath("m"))
	_, err := s.Path("m")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestDownloadParallelLimit(t *testing.T) {
	body := stories(t) // a real model: a finished download must open as one
	srv := &server{body: body, mode: "hold", release: make(chan struct{})}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	d := newDL(2)
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.Download(context.Background(), s, Request{Name: fmt.Sprintf("m%d", i), URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
		}()
	}
	require.Eventually(t, func() bool { return srv.inflight.Load() == 2 }, shared.Wait(t, 5*time.Second), 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // would a third start?
	require.EqualValues(t, 2, srv.inflight.Load())
	close(srv.release)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, 2, srv.peak.Load())
	require.EqualValues(t, 5, srv.requests.Load())
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 5)
}

func TestDownloadErrors(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	d := newDL(1)
	_, err := d.Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/x.bin"}, nil)
	require.ErrorContains(t, err, "404")
	_, err = d.Download(context.Background(), s, Request{Name: "../m", URL: ts.URL + "/x.bin"}, nil)
	require.ErrorContains(t, err, "not a valid model name")
	_, err = d.Download(context.Background(), s, Request{Name: "m", URL: ts.URL + "/x.bin", SHA256: "abc"}, nil)
	require.ErrorContains(t, err, "bad sha256")
}

func TestMirror(t *testing.T) {
	d := newDL(1)
	d.Mirror = "http://127.0.0.1:9/hf/"
	require.Equal(t, "http://127.0.0.1:9/hf/ggerganov/whisper.cpp/resolve/main/ggml-tiny.bin",
		d.ResolveURL("https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-tiny.bin"))
	require.Equal(t, "https://example.com/x.bin", d.ResolveURL("https://example.com/x.bin"))
}

func TestParseContentRange(t *testing.T) {
	s, n, ok := parseContentRange("bytes 100-199/1000")
	require.True(t, ok)
	require.EqualValues(t, 100, s)
	require.EqualValues(t, 1000, n)
	_, _, ok = parseContentRange("items 1-2/3")
	require.False(t, ok)
	s, n, ok = parseContentRange("bytes */1000")
	require.True(t, ok)
	require.EqualValues(t, -1, s)
	require.EqualValues(t, 1000, n)
}

// A file larger than the free space is refused before any byte is written.
func TestDownloadDiskFull(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(1<<55, 10))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	_, err := newDL(1).Download(context.Background(), s, Request{Name: "huge", URL: ts.URL + "/huge.bin"}, nil)
	require.ErrorContains(t, err, "free in")
	require.NoFileExists(t, s.partialPath("huge"))
}

// TestDownloadStalls: a server that stops sending after its headers and
// part of the body is given up after IdleTimeout without a byte, and the
// download resumes from what it has.
func TestDownloadStalls(t *testing.T) {
	body := stories(t)
	srv := &server{body: body, mode: "stall", cut: 300_000}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := &Store{Dir: t.TempDir()}
	d := newDL(1)
	require.Equal(t, 30*time.Second, d.IdleTimeout, "the default")
	d.IdleTimeout = 200 * time.Millisecond
	// A safety net so that a hang fails the test instead of the suite.
	ctx, cancel := context.WithTimeout(context.Background(), shared.Wait(t, 2*time.Minute))
	defer cancel()
	p, err := d.Download(ctx, s, Request{Name: "m", URL: ts.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, body, got)
	require.Equal(t, []string{"", "bytes=300000-"}, srv.ranges, "resumed after the stall")

	// Without retries left, the stall is the error, and it says so.
	srv = &server{body: body, mode: "stall", cut: 0}
	ts2 := httptest.NewServer(srv)
	defer ts2.Close()
	d.Retries = 0
	_, err = d.Download(ctx, s, Request{Name: "m2", URL: ts2.URL + "/f.gguf", SHA256: sha(body)}, nil)
	require.ErrorContains(t, err, "the server sent nothing for 200ms")
}

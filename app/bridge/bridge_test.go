package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Notes is a small service shaped like the app's: methods returning
// (T, error), error, or a value.
type Notes struct {
	items []Note
}

type Note struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
}

func (n *Notes) Add(text string, tags []string) (Note, error) {
	if text == "" {
		return Note{}, errors.New("empty note")
	}
	note := Note{ID: int64(len(n.items) + 1), Text: text + "#" + strings.Join(tags, ",")}
	n.items = append(n.items, note)
	return note, nil
}

func (n *Notes) List() ([]Note, error) { return n.items, nil }
func (n *Notes) Clear() error          { n.items = nil; return nil }
func (n *Notes) Count() int            { return len(n.items) }
func (n *Notes) Boom() error           { panic("boom") }

func call(t *testing.T, h http.Handler, name, body string) (int, reply, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("POST", "/api/call/"+name, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw), rec.Body.String())
	var r reply
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r))
	return rec.Code, r, raw
}

func TestCall(t *testing.T) {
	b := New(Options{})
	require.NoError(t, b.Register(&Notes{}))

	code, r, raw := call(t, b, "Notes.Add", `["hello", ["a","b"]]`)
	require.Equal(t, 200, code)
	require.Empty(t, r.Error)
	require.Equal(t, map[string]any{"id": 1.0, "text": "hello#a,b"}, raw["result"])

	_, _, raw = call(t, b, "Notes.List", `[]`)
	require.Len(t, raw["result"], 1)
	_, _, raw = call(t, b, "Notes.Count", ``)
	require.Equal(t, 1.0, raw["result"])

	// The method's error comes back as {"error"}, with a 200: the call worked.
	code, r, _ = call(t, b, "Notes.Add", `["", []]`)
	require.Equal(t, 200, code)
	require.Equal(t, "empty note", r.Error)

	code, r, raw = call(t, b, "Notes.Clear", `[]`)
	require.Equal(t, 200, code)
	require.Empty(t, r.Error)
	require.NotContains(t, raw, "result")
	_, _, raw = call(t, b, "Notes.Count", `[]`)
	require.Equal(t, 0.0, raw["result"])

	code, r, _ = call(t, b, "Notes.Boom", `[]`)
	require.Equal(t, 200, code)
	require.Contains(t, r.Error, "boom")
}

func TestCallErrors(t *testing.T) {
	b := New(Options{})
	require.NoError(t, b.Register(&Notes{}))
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"Nope.Add", `[]`, `no such service "Nope"`, 404},
		{"Notes", `[]`, `no such service "Notes"`, 404},
		{"Notes.Missing", `[]`, "no such method Notes.Missing", 404},
		{"Notes.Add", `["x"]`, "takes 2 arguments, got 1", 400},
		{"Notes.Add", `{"text":"x"}`, "must be a JSON array", 400},
		{"Notes.Add", `[1, []]`, "argument 1", 400},
		{"Notes.Add", `["x", "notalist"]`, "argument 2", 400},
	} {
		code, r, _ := call(t, b, tc.name, tc.body)
		require.Equal(t, tc.code, code, tc.name+" "+tc.body)
		require.Contains(t, r.Error, tc.want, tc.name+" "+tc.body)
	}
	require.Error(t, b.Register(Notes{}))
	var nilNotes *Notes
	require.Error(t, b.Register(nilNotes))

	// Another origin's page may not drive the API.
	req := httptest.NewRequest("POST", "http://127.0.0.1:1234/api/call/Notes.Count", strings.NewReader(`[]`))
	req.Header.Set("Origin", "http://evil.example")
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, req)
	require.Equal(t, http.StatusForbidden, rec.Code)
	req.Header.Set("Origin", "http://127.0.0.1:1234")
	rec = httptest.NewRecorder()
	b.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestEvents(t *testing.T) {
	b := New(Options{})
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	resp, err := http.Get(srv.URL + "/api/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": connected\n", line)

	b.Emit("chat:token", map[string]any{"text": "hi"})
	b.Emit("chat:done", nil)
	var got []event
	for len(got) < 2 {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var e event
			require.NoError(t, json.Unmarshal([]byte(data), &e))
			got = append(got, e)
		}
	}
	require.Equal(t, "chat:token", got[0].Name)
	require.Equal(t, map[string]any{"text": "hi"}, got[0].Data)
	require.Equal(t, "chat:done", got[1].Name)

	// Close ends the stream.
	b.Close()
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(rd); done <- err }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, 5*time.Second)):
		t.Fatal("stream not closed")
	}
}

func upload(t *testing.T, h http.Handler, field, name string, data []byte) (int, reply) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, name)
	require.NoError(t, err)
	_, err = fw.Write(data)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	req := httptest.NewRequest("POST", "/api/upload", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r reply
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r))
	return rec.Code, r
}

func TestUpload(t *testing.T) {
	saved := map[string][]byte{}
	save := func(name string, r io.Reader) (string, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return "", err
		}
		id := fmt.Sprintf("upload-%d", len(saved)+1)
		saved[id+":"+name] = b
		return id, nil
	}
	b := New(Options{SaveUpload: save, MaxUpload: 1 << 10})
	data := []byte("RIFF....WAVE")

	code, r := upload(t, b, "file", "../../etc/clip.wav", data)
	require.Equal(t, 200, code, r.Error)
	require.Equal(t, "upload-1", r.Result, "an id, never a path")
	require.Equal(t, data, saved["upload-1:clip.wav"], "only the base name is passed on")

	code, r = upload(t, b, "other", "x.wav", data)
	require.Equal(t, 400, code)
	require.Contains(t, r.Error, `no "file" part`)

	code, r = upload(t, b, "file", "big.wav", make([]byte, 4<<10))
	require.Equal(t, http.StatusRequestEntityTooLarge, code, r.Error)

	code, _ = upload(t, New(Options{}), "file", "x.wav", data)
	require.Equal(t, 404, code)

	// At most uploadRate a minute.
	b = New(Options{SaveUpload: save})
	for range uploadRate {
		code, r = upload(t, b, "file", "x.wav", data)
		require.Equal(t, 200, code, r.Error)
	}
	code, r = upload(t, b, "file", "x.wav", data)
	require.Equal(t, http.StatusTooManyRequests, code)
	require.Contains(t, r.Error, "a minute")
}

func TestRecordingAndAssets(t *testing.T) {
	dir := t.TempDir()
	wav := filepath.Join(dir, "1.wav")
	audio := bytes.Repeat([]byte{1, 2, 3, 4}, 100)
	require.NoError(t, os.WriteFile(wav, audio, 0o644))
	b := New(Options{
		Assets: fstest.MapFS{"index.html": {Data: []byte("<h1>Hark</h1>")}},
		Recording: func(id int64) (string, error) {
			if id == 1 {
				return wav, nil
			}
			return "", errors.New("no such item")
		},
	})
	get := func(path, rng string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, req)
		return rec
	}
	rec := get("/media/recording/1", "")
	require.Equal(t, 200, rec.Code)
	require.Equal(t, "audio/wav", rec.Header().Get("Content-Type"))
	require.Equal(t, audio, rec.Body.Bytes())
	rec = get("/media/recording/1", "bytes=4-7")
	require.Equal(t, http.StatusPartialContent, rec.Code)
	require.Equal(t, []byte{1, 2, 3, 4}, rec.Body.Bytes())
	require.Equal(t, 404, get("/media/recording/2", "").Code)
	require.Equal(t, 400, get("/media/recording/x", "").Code)

	rec = get("/", "")
	require.Equal(t, 200, rec.Code)
	require.Contains(t, rec.Body.String(), "<h1>Hark</h1>")
	require.Equal(t, 404, get("/api/nothing", "").Code)
}

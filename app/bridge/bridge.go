// Package bridge serves the desktop UI and the app services over plain HTTP,
// so that a browser (the end-to-end tests, `hark ui`) talks to the same Go
// structs the Wails window binds:
//
//	POST /api/call/{Service}.{Method}   JSON array of arguments -> {"result": ...} | {"error": "..."}
//	GET  /api/events                    server-sent events: {"name": ..., "data": ...}
//	POST /api/upload                    multipart "file" -> {"result": "upload-ID"} (an id, never a path)
//	GET  /media/recording/{id}          a recording's audio (Range requests work, for <audio>)
//	GET  /...                           the built frontend
//
// In the Wails window the same Bridge is the asset server's Handler, which
// serves /media and /api requests that the embedded assets cannot answer.
package bridge

import (
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/internal/localhttp"
	"github.com/harkapp/hark/internal/usererr"
)

// Options configure a Bridge; every field is optional.
type Options struct {
	// Assets is the built frontend (frontend/dist); nil serves no pages.
	Assets fs.FS
	// SaveUpload keeps a browser upload and returns its id; nil disables
	// /api/upload.
	SaveUpload func(name string, r io.Reader) (string, error)
	// MaxUpload caps one upload in bytes (default DefaultMaxUpload).
	MaxUpload int64
	// Recording maps a history id to its audio file; nil disables /media.
	Recording func(id int64) (string, error)
	// Folders are the app's folders (data, models), whose absolute paths
	// error answers never show (errText).
	Folders []usererr.Folder
}

// DefaultMaxUpload bounds an upload: hours of uncompressed audio, but never
// an unbounded write to disk.
const DefaultMaxUpload = 2 << 30

// uploadRate is how many uploads a minute are accepted.
const uploadRate = 20

// maxCallBody bounds a call's JSON arguments (chat text, settings).
const maxCallBody = 16 << 20

// Bridge is an http.Handler and an app Emitter. Create it before the
// services (they need the Emitter), then Register them.
type Bridge struct {
	opts    Options
	hub     *hub
	uploads *localhttp.Limiter
	mu      sync.RWMutex
	calls   map[string]*service
	mux     *http.ServeMux
}

// New returns a Bridge with no services registered yet.
func New(opts Options) *Bridge {
	if opts.MaxUpload <= 0 {
		opts.MaxUpload = DefaultMaxUpload
	}
	b := &Bridge{opts: opts, hub: newHub(), calls: map[string]*service{},
		uploads: &localhttp.Limiter{N: uploadRate, Per: time.Minute}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/call/{name}", b.serveCall)
	mux.HandleFunc("GET /api/events", b.serveEvents)
	mux.HandleFunc("POST /api/upload", b.serveUpload)
	mux.HandleFunc("GET /media/recording/{id}", b.serveRecording)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, reply{Error: "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	if opts.Assets != nil {
		mux.Handle("/", noCache(http.FileServerFS(opts.Assets)))
	}
	b.mux = mux
	return b
}

// Register adds services: pointers to structs whose exported methods become
// callable as "StructName.Method", as Wails binds them.
func (b *Bridge) Register(services ...any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range services {
		svc, err := newService(s)
		if err != nil {
			return err
		}
		b.calls[svc.name] = svc
	}
	return nil
}

// errText is err as the page is told it: one plain line, no Go type
// names, no paths of the app's folders (internal/usererr).
func (b *Bridge) errText(err error) string {
	return usererr.Message(err, usererr.Options{Folders: b.options().Folders})
}

func (b *Bridge) options() Options {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.opts
}

// Emit implements the app's Emitter: every connected /api/events client
// receives the event.
func (b *Bridge) Emit(name string, data any) { b.hub.publish(name, data) }

// Close ends every open event stream.
func (b *Bridge) Close() { b.hub.close() }

func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A web page in the user's browser may send requests to localhost; only
	// the UI's own origin may use the API (a cross-origin JSON POST would
	// also need a preflight that is never answered).
	if o := r.Header.Get("Origin"); o != "" && strings.HasPrefix(r.URL.Path, "/api/") && !sameOrigin(o, r.Host) {
		writeJSON(w, http.StatusForbidden, reply{Error: "cross-origin request refused"})
		return
	}
	b.mux.ServeHTTP(w, r)
}

func sameOrigin(origin, host string) bool {
	for _, scheme := range []string{"http://", "https://", "wails://"} {
		if origin == scheme+host {
			return true
		}
	}
	return false
}

// noCache keeps a rebuilt frontend from being shadowed by a cached one.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

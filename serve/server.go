// Package serve is Hark's local OpenAI-compatible HTTP API: the models of
// the models folder, for speech-to-text (/v1/audio/...) and text
// generation (/v1/chat/completions, /v1/completions).
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/localhttp"
)

// Config configures a Server. Zero values take the defaults below.
type Config struct {
	Store *models.Store
	// APIKey, when set, is required as "Authorization: Bearer KEY" on
	// every route but /health.
	APIKey string
	// AllowHosts are Host names accepted besides the loopback ones
	// (HTTPServer); CORSOrigins are the origins whose pages may call the
	// API from a browser.
	AllowHosts, CORSOrigins []string
	// MaxUpload bounds an audio upload (DefaultMaxUpload).
	MaxUpload int64
	// MaxAudioDuration bounds the audio a transcription decodes
	// (DefaultMaxAudioDuration): a few MB of low-bitrate audio can hold
	// hours, and the model is held for all of them.
	MaxAudioDuration time.Duration
	// MaxBody bounds a JSON request body (DefaultMaxBody).
	MaxBody int64
	// RequestTimeout bounds a request, waiting in a model's queue
	// included (DefaultRequestTimeout).
	RequestTimeout time.Duration
	// StreamIdle drops a streaming client that sends nothing for this
	// long (DefaultStreamIdle).
	StreamIdle time.Duration
	// StreamInterval is the least time between two flushes of a stream's
	// text chunks (DefaultStreamInterval; negative: a flush after every
	// token).
	StreamInterval time.Duration
	// IdleUnload unloads a model unused for this long (DefaultIdleUnload;
	// negative keeps models loaded until Close).
	IdleUnload time.Duration
	// WhisperBeam is the beam size of temperature-0 transcription
	// (DefaultWhisperBeam; 1 is greedy).
	WhisperBeam int
	// Runtime, when set, is the model cache the server shares (the app's:
	// an API request and a dictation use the same loaded model); the
	// fields below are then ignored and Close leaves it open.
	Runtime *runtime.Runtime
	// Context caps an LLM's context (0: llm.DefaultContext).
	Context int
	// Threads is the size of the CPU worker pool every loaded model shares
	// (0: one per physical core).
	Threads int
	// Backend names the inference backend (engine/backends; "" = auto).
	Backend string
	// GPU is the device index for backends with several GPUs (--gpu).
	GPU int
	// NoBatch answers chat and completion requests one after another on
	// the model instead of decoding them together (engine/batch; only on
	// the backends of runtime.BatchBackends).
	NoBatch bool
	// BatchGPU decodes concurrent requests together on a GPU backend too
	// (runtime.Options.BatchGPU): more streams at once, each lone stream
	// slower than unbatched.
	BatchGPU bool
	// Log receives start-up notes, such as why a model runs on the CPU
	// when Metal was expected (nil: discarded).
	Log io.Writer
}

// Defaults.
const (
	DefaultMaxUpload = 200 << 20
	// DefaultMaxAudioDuration takes a long meeting, lecture or podcast
	// whole: longer audio is rare, and would hold the model for hours
	// (the spectrogram's spool on disk grows by 115 MB an hour).
	DefaultMaxAudioDuration = 4 * time.Hour
	DefaultMaxBody          = 8 << 20
	DefaultRequestTimeout   = 10 * time.Minute
	DefaultIdleUnload       = 5 * time.Minute
	DefaultStreamIdle       = 30 * time.Second
	DefaultWhisperBeam      = 5
)

// Server answers the API. It is an http.Handler.
type Server struct {
	cfg Config
	// streamDone, if set (tests), gets each stream's stats as it ends.
	streamDone func(streamStats)
	rt         *runtime.Runtime
	ownRT      bool // made by New, closed by Close
	mux        *http.ServeMux
}

// New returns a server for cfg; Close unloads its models.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("serve: no models folder")
	}
	// Checked here, before any listener opens, so a bad flag never follows
	// a "listening on" line.
	for _, o := range cfg.CORSOrigins {
		if err := localhttp.CheckOrigin(o); err != nil {
			return nil, err
		}
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MaxAudioDuration <= 0 {
		cfg.MaxAudioDuration = DefaultMaxAudioDuration
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.IdleUnload == 0 {
		cfg.IdleUnload = DefaultIdleUnload
	}
	if cfg.StreamInterval == 0 {
		cfg.StreamInterval = DefaultStreamInterval
	}
	if cfg.StreamIdle <= 0 {
		cfg.StreamIdle = DefaultStreamIdle
	}
	if cfg.WhisperBeam <= 0 {
		cfg.WhisperBeam = DefaultWhisperBeam
	}
	s := &Server{cfg: cfg}
	s.rt = cfg.Runtime
	if s.rt == nil {
		idle, check := cfg.IdleUnload, time.Hour
		if idle > 0 {
			check = max(idle/4, 10*time.Millisecond)
		}
		s.rt = runtime.New(runtime.Options{Backend: cfg.Backend, GPU: cfg.GPU, Threads: cfg.Threads, Log: cfg.Log, BatchGPU: cfg.BatchGPU,
			LLM: llm.Options{Context: cfg.Context}, WhisperBeams: cfg.WhisperBeam,
			Idle: func() time.Duration { return idle }, IdleCheck: check})
		s.ownRT = true
	}
	s.mux = s.routes()
	return s, nil
}

// Close unloads the models of the server's own runtime (a shared one is
// its owner's to close).
func (s *Server) Close() {
	if s.ownRT {
		s.rt.Close()
	}
}

// loaded names the models in memory.
func (s *Server) loaded() []string {
	names := map[string]string{}
	if entries, err := s.cfg.Store.List(); err == nil {
		for _, e := range entries {
			names[e.Path] = e.Name
		}
	}
	out := []string{}
	for _, in := range s.rt.Loaded() {
		if n, ok := names[in.Path]; ok {
			out = append(out, n)
		}
	}
	return out
}

// route is one path of the API: its handler per method, and whether it
// is open without the API key (/health; the WebSocket checks the key
// itself, as browsers cannot send headers).
type route struct {
	path    string
	methods map[string]http.HandlerFunc
	open    bool
}

// routes registers the API on a ServeMux: "METHOD PATH" for each method,
// PATH alone for the 405 of the others, and / for the 404 of unknown
// URLs, both in OpenAI's error shape (the mux's own are plain text).
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range []route{
		{path: "/health", methods: map[string]http.HandlerFunc{"GET": s.health}, open: true}, // GET takes HEAD too
		{path: "/v1/models", methods: map[string]http.HandlerFunc{"GET": s.listModels}},
		{path: "/v1/models/{id}", methods: map[string]http.HandlerFunc{"GET": s.getModel}},
		{path: "/v1/audio/transcriptions", methods: map[string]http.HandlerFunc{"POST": s.transcriptions}},
		{path: "/v1/audio/translations", methods: map[string]http.HandlerFunc{"POST": s.translations}},
		{path: "/v1/audio/stream", methods: map[string]http.HandlerFunc{"GET": s.audioStream}, open: true},
		{path: "/v1/chat/completions", methods: map[string]http.HandlerFunc{"POST": s.chatCompletions}},
		{path: "/v1/completions", methods: map[string]http.HandlerFunc{"POST": s.completions}},
	} {
		allow := make([]string, 0, len(rt.methods))
		for m, h := range rt.methods {
			if !rt.open {
				h = s.authorized(h)
			}
			mux.HandleFunc(m+" "+rt.path, h)
			allow = append(allow, m)
		}
		slices.Sort(allow)
		if slices.Contains(allow, "GET") {
			allow = append(allow, "HEAD")
		}
		mux.HandleFunc(rt.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, newError(http.StatusMethodNotAllowed, "", "method_not_allowed", fmt.Sprintf("Method %s is not allowed on %s", r.Method, r.URL.Path)))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(http.StatusNotFound, "", "unknown_url", fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path)))
	})
	return mux
}

// ServeHTTP routes a request: /health is open, everything else needs the
// API key when one is configured.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// authorized wraps h: the API key when one is configured, and the
// request's time bound.
func (s *Server) authorized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.APIKey != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.APIKey)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="hark"`)
				writeError(w, newError(http.StatusUnauthorized, "", "invalid_api_key", "Missing or incorrect API key: send it as \"Authorization: Bearer KEY\""))
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		h(w, r.WithContext(ctx))
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, healthResponse{Status: "ok", Loaded: s.loaded()})
}

type healthResponse struct {
	Status string   `json:"status"`
	Loaded []string `json:"loaded"`
}

// list is OpenAI's list object.
type list[T any] struct {
	Object string `json:"object"`
	Data   []T    `json:"data"`
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) modelObjects() ([]modelObject, error) {
	entries, err := s.cfg.Store.List()
	if err != nil {
		return nil, err
	}
	out := make([]modelObject, 0, len(entries))
	for _, e := range entries {
		out = append(out, modelObject{ID: e.Name, Object: "model", Created: modTime(e.Path), OwnedBy: "hark"})
	}
	return out, nil
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	ms, err := s.modelObjects()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, list[modelObject]{Object: "list", Data: ms})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ms, err := s.modelObjects()
	if err != nil {
		writeError(w, err)
		return
	}
	for _, m := range ms {
		if m.ID == id {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	writeError(w, newError(http.StatusNotFound, "model", "model_not_found", fmt.Sprintf("The model %q does not exist", id)))
}

// acquireError turns a queue wait that ended with the request's context
// into the answer for it.
func acquireError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return newError(http.StatusGatewayTimeout, "", "timeout", "The request timed out")
	}
	if errors.Is(err, context.Canceled) {
		return newError(499, "", "canceled", "The request was canceled")
	}
	return err
}

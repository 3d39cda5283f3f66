package app

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/models"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/serve"
)

// ServerStatus is the local API server's state.
type ServerStatus struct {
	Running bool   `json:"running"`
	Addr    string `json:"addr"` // the address bound (the real port when :0 was asked)
	URL     string `json:"url"`  // http://ADDR
	Error   string `json:"error"`
}

// Server runs the OpenAI-compatible API (package serve) inside the app,
// over the app's models folder and the app's model cache: an API request
// and a dictation use the same loaded model, queued by priority.
type Server struct {
	deps serverDeps

	mu        sync.Mutex
	st        ServerStatus
	requested string // the address asked for (":0" binds elsewhere)
	srv       *serve.Server
	cancel    context.CancelFunc
	done      chan struct{}
}

// Status reports whether the server runs and where.
func (s *Server) Status() (ServerStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

// serverDeps is what the Server uses of the app: the settings (address,
// CORS origins), the models folder and the shared model cache it serves
// from, and whether the app is closing.
type serverDeps struct {
	settings settingsReader
	emit     Emitter
	models   *models.Store
	rt       *runtime.Runtime
	closed   func() bool
}

// Start starts the server on addr ("" = the settings' ServerAddr;
// "127.0.0.1:0" picks a free port). Binding beyond loopback is refused
// (the app sets no API key). Starting a running server restarts it when
// the address differs.
func (s *Server) Start(addr string) (ServerStatus, error) {
	if addr == "" {
		set, err := s.deps.settings.Get()
		if err != nil {
			return s.Status()
		}
		addr = set.ServerAddr
	}
	s.mu.Lock()
	if s.st.Running && (addr == s.st.Addr || addr == s.requested) {
		defer s.mu.Unlock()
		return s.st, nil
	}
	s.mu.Unlock()
	if _, err := s.Stop(); err != nil {
		return s.Status()
	}
	fail := func(err error) (ServerStatus, error) {
		s.mu.Lock()
		s.st = ServerStatus{Error: err.Error()}
		st := s.st
		s.mu.Unlock()
		s.deps.emit.Emit(EventServerStatus, st)
		return st, err
	}
	if s.deps.closed() {
		return fail(errClosed)
	}
	cfg := serve.Config{Store: s.deps.models, Runtime: s.deps.rt, WhisperBeam: speechBeams}
	if set, err := s.deps.settings.Get(); err == nil {
		cfg.CORSOrigins = set.corsOrigins()
		cfg.MaxAudioDuration = time.Duration(set.ServerMaxAudioMinutes) * time.Minute
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return fail(err)
	}
	ln, err := serve.Listen(addr, "")
	if err != nil {
		srv.Close()
		return fail(err)
	}
	hs, err := serve.HTTPServer(srv, ln)
	if err != nil {
		ln.Close()
		srv.Close()
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	bound := ln.Addr().String()
	s.mu.Lock()
	s.srv, s.cancel, s.done, s.requested = srv, cancel, done, addr
	s.st = ServerStatus{Running: true, Addr: bound, URL: "http://" + bound}
	st := s.st
	s.mu.Unlock()
	go func() {
		defer close(done)
		err := serve.Serve(ctx, hs, ln)
		srv.Close()
		s.mu.Lock()
		if s.done == done { // not already replaced by a Stop/Start
			s.st = ServerStatus{}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.st.Error = err.Error()
			}
			s.srv, s.cancel, s.done = nil, nil, nil
			st := s.st
			s.mu.Unlock()
			s.deps.emit.Emit(EventServerStatus, st)
			return
		}
		s.mu.Unlock()
	}()
	s.deps.emit.Emit(EventServerStatus, st)
	return st, nil
}

// Stop stops the server (running requests get a few seconds to finish).
func (s *Server) Stop() (ServerStatus, error) {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.srv, s.cancel, s.done = nil, nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return s.Status()
	}
	cancel()
	<-done
	s.mu.Lock()
	s.st = ServerStatus{}
	st := s.st
	s.mu.Unlock()
	s.deps.emit.Emit(EventServerStatus, st)
	return st, nil
}

package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/models"
)

// Kind is what a model file does.
type Kind string

const (
	KindSpeech Kind = "speech" // whisper.cpp .bin
	KindChat   Kind = "chat"   // GGUF LLM
)

// kindOf tells a model's kind from its file name (the store holds .bin
// Whisper files and .gguf LLMs).
func kindOf(path string) Kind {
	if filepath.Ext(path) == ".gguf" {
		return KindChat
	}
	return KindSpeech
}

// slot is one model of the pool. sem (capacity 1) is the model's queue:
// requests take turns, so the model's state (KV cache, buffers) is only
// ever used by one of them.
type slot struct {
	name     string
	sem      chan struct{}
	refs     int       // requests holding or waiting; guarded by pool.mu
	lastUsed time.Time // guarded by pool.mu
	model    io.Closer // loaded on first use, by the holder of sem
}

// pool keeps at most one loaded copy of each model, loads models on demand
// and unloads those idle for longer than idle.
type pool struct {
	store *models.Store
	load  func(name, path string) (io.Closer, error)
	idle  time.Duration

	mu     sync.Mutex
	slots  map[string]*slot
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

func newPool(store *models.Store, idle time.Duration, load func(name, path string) (io.Closer, error)) *pool {
	p := &pool{store: store, load: load, idle: idle, slots: map[string]*slot{}, stop: make(chan struct{}), done: make(chan struct{})}
	go p.janitor()
	return p
}

// errUnknownModel is answered with 404.
var errUnknownModel = errors.New("unknown model")

// acquire waits for the model's turn (or ctx's end), loading the model
// when it is not in memory. want is the kind the endpoint needs. The
// returned release must be called once the request is done with it.
func (p *pool) acquire(ctx context.Context, name string, want Kind) (io.Closer, func(), error) {
	path, err := p.store.Path(name)
	if err != nil {
		return nil, nil, newError(404, "model", "model_not_found", fmt.Sprintf("The model %q does not exist in the models folder", name))
	}
	if k := kindOf(path); k != want {
		return nil, nil, badRequest("model", fmt.Sprintf("The model %q is a %s model; this endpoint needs a %s model", name, k, want))
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, newError(503, "", "", "the server is shutting down")
	}
	s := p.slots[name]
	if s == nil {
		s = &slot{name: name, sem: make(chan struct{}, 1)}
		p.slots[name] = s
	}
	s.refs++
	p.mu.Unlock()

	drop := func() {
		p.mu.Lock()
		s.refs--
		s.lastUsed = time.Now()
		p.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, nil, ctx.Err()
	}
	release := func() { <-s.sem; drop() }
	if s.model == nil {
		m, err := p.load(name, path)
		if err != nil {
			release()
			return nil, nil, badRequest("model", fmt.Sprintf("The model %q could not be loaded: %v", name, err))
		}
		p.mu.Lock()
		s.model = m
		p.mu.Unlock()
	}
	return s.model, release, nil
}

// janitor unloads models nobody has used for p.idle.
func (p *pool) janitor() {
	defer close(p.done)
	if p.idle <= 0 {
		<-p.stop
		return
	}
	t := time.NewTicker(max(p.idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.sweep(now.Add(-p.idle))
		}
	}
}

// sweep unloads the models unused since before. A slot with no requests
// holding or waiting cannot be acquired while p.mu is held, so closing it
// here races with nobody; the next request loads a fresh copy.
func (p *pool) sweep(before time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, s := range p.slots {
		if s.refs == 0 && s.lastUsed.Before(before) {
			delete(p.slots, name)
			if s.model != nil {
				s.model.Close()
			}
		}
	}
}

// loaded lists the names of the models in memory.
func (p *pool) loaded() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, s := range p.slots {
		if s.model != nil {
			out = append(out, name)
		}
	}
	return out
}

// close stops the janitor and unloads every model not in use.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	p.sweep(time.Now().Add(time.Hour))
}

// Package runtime is the one place models are loaded: it opens a Whisper
// or LLM file on a backend (engine/backends: auto, cpu, metal, ...) and
// keeps one cache of loaded models shared by the desktop app, `hark serve`
// and the CLI. Each loaded model has a queue with priorities (dictation
// first; API and chat requests in arrival order; file jobs last, yielding
// between 30-s windows), is unloaded after an idle time, and counts
// against a memory budget.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/models"
)

// Options configure a Runtime. Zero values take the defaults.
type Options struct {
	// Backend is the backend choice ("" = auto). SetBackend changes it.
	Backend string
	// Threads is the size of the one CPU worker pool every model loaded
	// on the CPU shares (0 = one per physical core).
	Threads int
	// GPU is the device index for backends with several GPUs (--gpu).
	GPU int
	// Budget bounds the memory of loaded models in bytes (0 = half of
	// physical memory; negative = unbounded).
	Budget int64
	// Idle returns how long an unused model stays loaded (nil or <= 0:
	// until Close). Read at every check, so a setting can change it.
	Idle func() time.Duration
	// IdleCheck is how often idle models are looked for (default 30 s).
	IdleCheck time.Duration
	// LLM are the options LLMs are loaded with (context length, a sampler
	// built into the plan).
	LLM llm.Options
	// WhisperBeams is the largest beam a speech model is loaded for
	// (default 5); transcriptions may use fewer.
	WhisperBeams int
	// Log receives notes such as why auto used the CPU (nil: discarded).
	Log io.Writer
	// BatchGPU batches API requests (LLMModel.Batch) on the GPU backends
	// too, not only on those of BatchBackends: for many concurrent
	// clients, at the cost of a lone stream's speed there.
	BatchGPU bool
}

// Kind is what a model does.
type Kind string

const (
	Speech Kind = "speech" // a whisper.cpp .bin file
	Chat   Kind = "chat"   // a GGUF LLM
)

// KindOf tells a model's kind from its file name, as the models folder
// does: .gguf files are LLMs, the rest Whisper.
func KindOf(path string) Kind {
	if filepath.Ext(path) == ".gguf" {
		return Chat
	}
	return Speech
}

// Runtime is the model cache. Its methods are safe for concurrent use.
type Runtime struct {
	opt    Options
	budget int64

	mu      sync.Mutex
	backend string
	entries map[key]*entry
	loads   map[string]int // per path, for tests and diagnostics
	seq     uint64
	closed  bool
	observe func(QueueEvent) // Observe's

	beMu     sync.Mutex
	backends map[string]*sharedBackend // by backend choice
	stop     chan struct{}
	done     chan struct{}
}

// key identifies a loaded model: the same file on two backends is two
// models.
type key struct{ path, backend string }

// entry is one model of the cache: its queue and, once loaded, the model.
type entry struct {
	key    key
	busy   bool     // someone holds the model
	holder Priority // the holder's priority, when busy
	// passPri is the holder's priority for the passes of the model on a
	// shared CPU pool (cpu.Backend.Prioritized): a dictation's passes go
	// before a chat's
	passPri  atomic.Int32
	waiters  []*waiter
	model    loaded // nil until loaded
	bytes    int64  // counted against the budget (reserved while loading)
	lastUsed time.Time
	stale    bool // dropped while in use: unload when released
}

// loaded is a model in memory.
type loaded interface {
	close()
	backendName() string
}

// New returns a runtime; Close unloads its models.
func New(opt Options) *Runtime {
	if opt.IdleCheck <= 0 {
		opt.IdleCheck = 30 * time.Second
	}
	if opt.WhisperBeams <= 0 {
		opt.WhisperBeams = 5
	}
	r := &Runtime{opt: opt, backend: opt.Backend, entries: map[key]*entry{}, loads: map[string]int{},
		backends: map[string]*sharedBackend{},
		stop:     make(chan struct{}), done: make(chan struct{})}
	r.budget = opt.Budget
	if r.budget == 0 {
		r.budget = models.TotalRAM() / 2 // 0 when unknown: unbounded
	}
	go r.janitor()
	return r
}

// Budget is the memory budget in bytes (<= 0: unbounded).
func (r *Runtime) Budget() int64 { return r.budget }

// SetBackend changes the backend choice for models loaded from now on and
// unloads the idle models loaded with another choice.
func (r *Runtime) SetBackend(name string) error {
	if err := backends.Valid(name); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.backend = name
	for k, e := range r.entries {
		if k.backend != name && r.idle(e) {
			r.unload(e)
		}
	}
	return nil
}

// Info describes a loaded model.
type Info struct {
	Path    string `json:"path"`
	Kind    Kind   `json:"kind"`
	Backend string `json:"backend"` // the backend it runs on ("cpu", "metal")
	Bytes   int64  `json:"bytes"`   // counted against the budget
	InUse   bool   `json:"inUse"`
	Waiting int    `json:"waiting"` // requests queued for it
}

// Loaded lists the models in memory, by path.
func (r *Runtime) Loaded() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Info
	for k, e := range r.entries {
		if e.model == nil {
			continue
		}
		out = append(out, Info{Path: k.path, Kind: KindOf(k.path), Backend: e.model.backendName(), Bytes: e.bytes, InUse: e.busy, Waiting: len(e.waiters)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Loads is how many times the file at path was loaded so far.
func (r *Runtime) Loads(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loads[path]
}

// Drop unloads the file at path (it is being deleted): now where it is
// idle, else when its holder releases it.
func (r *Runtime) Drop(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, e := range r.entries {
		if k.path != path {
			continue
		}
		if r.idle(e) {
			r.unload(e)
		} else {
			e.stale = true
		}
	}
}

// UnloadIdle unloads the models unused for longer than the idle time now
// (the janitor does it every IdleCheck).
func (r *Runtime) UnloadIdle() {
	if r.opt.Idle == nil {
		return
	}
	limit := r.opt.Idle()
	if limit <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if r.idle(e) && time.Since(e.lastUsed) > limit {
			r.unload(e)
		}
	}
}

func (r *Runtime) janitor() {
	defer close(r.done)
	t := time.NewTicker(r.opt.IdleCheck)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.UnloadIdle()
		}
	}
}

// idle reports whether nobody holds or waits for e. r.mu is held.
func (r *Runtime) idle(e *entry) bool { return !e.busy && len(e.waiters) == 0 }

// unload closes an idle entry's model and forgets the entry. r.mu is held.
func (r *Runtime) unload(e *entry) {
	if e.model != nil {
		e.model.close()
		e.model = nil
	}
	e.bytes = 0
	delete(r.entries, e.key)
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("runtime: closed")

// Close stops the janitor and unloads every model; models in use are
// unloaded when released.
func (r *Runtime) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	for _, e := range r.entries {
		if r.idle(e) {
			r.unload(e)
		} else {
			e.stale = true
		}
	}
	r.mu.Unlock()
	close(r.stop)
	<-r.done
}

// CloseForExit is Close for a process that exits right after (a one-shot
// `hark transcribe`): the runtime stops taking requests, but its models
// and backends are left to the operating system, whose exit frees a GPU's
// buffers, graphs, modules and context at once. Freeing them one by one
// first cost such a run ~80 ms of its ~0.9 s on the H200 (BENCHMARKS,
// issue #36). Nothing is written at close, so nothing is lost.
func (r *Runtime) CloseForExit() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
}

// acquire waits for e's turn at priority pri, then loads the model when
// needed with load. It returns the entry held.
func (r *Runtime) acquire(ctx context.Context, path string, pri Priority, load func(backend string, pri *atomic.Int32) (loaded, error)) (*entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	k := key{path, r.backend}
	e := r.entries[k]
	if e == nil {
		e = &entry{key: k}
		r.entries[k] = e
	}
	if err := r.wait(ctx, e, pri); err != nil {
		return nil, err // r.mu released
	}
	if e.model != nil {
		r.mu.Unlock()
		return e, nil
	}
	need := estimate(path, st.Size())
	if err := r.reserve(e, need); err != nil {
		r.handOver(e)
		r.mu.Unlock()
		return nil, err
	}
	backend := k.backend
	r.mu.Unlock()

	m, err := load(backend, &e.passPri)

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		e.bytes = 0
		r.handOver(e)
		return nil, fmt.Errorf("loading %s: %w", filepath.Base(path), err)
	}
	e.model = m
	r.loads[path]++
	return e, nil
}

// release gives e to its next waiter, or marks it free.
func (r *Runtime) release(e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.lastUsed = time.Now()
	r.handOver(e)
}

// handOver passes e to the best waiter or frees it; a stale or orphaned
// idle entry is unloaded. r.mu is held.
func (r *Runtime) handOver(e *entry) {
	r.note(e, Released, e.holder)
	if w := e.next(); w != nil {
		r.note(e, Granted, w.pri)
		e.hold(w.pri)
		w.granted = true
		close(w.ch)
		return
	}
	e.busy = false
	if e.stale || e.model == nil {
		r.unload(e)
	}
}

package runtime

import (
	"fmt"
	"sync/atomic"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/cpu"
)

// sharedBackend is a backend the runtime opened once and lends to every
// model loaded on it: one CPU worker pool for speech and chat alike (two
// pools would put twice as many workers as cores on the CPU), one GPU
// context and kernel module per device.
type sharedBackend struct {
	be   backends.Backend
	refs int
}

// openBackend lends the backend choice name, opening it on first use and
// logging why auto used the CPU when a GPU was expected; on the CPU, a view
// whose passes take the shared pool at the priority pri holds. Each call
// is matched by one closeBackend.
func (r *Runtime) openBackend(name string, pri *atomic.Int32) (backends.Backend, error) {
	r.beMu.Lock()
	defer r.beMu.Unlock()
	if s := r.backends[name]; s != nil {
		s.refs++
		return prioritized(s.be, pri), nil
	}
	be, reason, err := backends.Open(name, backends.Options{Threads: r.opt.Threads, GPU: r.opt.GPU, Log: r.opt.Log})
	if err != nil {
		return nil, err
	}
	if reason != "" && r.opt.Log != nil {
		fmt.Fprintln(r.opt.Log, "hark:", reason)
	}
	r.backends[name] = &sharedBackend{be: be, refs: 1}
	return prioritized(be, pri), nil
}

// prioritized is be with its passes at priority pri on the CPU pool; other
// backends (a GPU orders its own queue) are be itself.
func prioritized(be backends.Backend, pri *atomic.Int32) backends.Backend {
	if c, ok := be.(*cpu.Backend); ok && pri != nil {
		return c.Prioritized(pri)
	}
	return be
}

// closeBackend returns a backend lent by openBackend under name; the last
// model to return it closes it (its workers stop, the GPU is released).
func (r *Runtime) closeBackend(name string) {
	r.beMu.Lock()
	defer r.beMu.Unlock()
	s := r.backends[name]
	if s == nil {
		return
	}
	if s.refs--; s.refs == 0 {
		s.be.Close()
		delete(r.backends, name)
	}
}

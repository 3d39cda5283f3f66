package runtime

import (
	"fmt"

	"github.com/harkapp/hark/engine/backends"
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
// logging why auto used the CPU when a GPU was expected. Each call is
// matched by one closeBackend.
func (r *Runtime) openBackend(name string) (backends.Backend, error) {
	r.beMu.Lock()
	defer r.beMu.Unlock()
	if s := r.backends[name]; s != nil {
		s.refs++
		return s.be, nil
	}
	be, reason, err := backends.Open(name, backends.Options{Threads: r.opt.Threads, GPU: r.opt.GPU})
	if err != nil {
		return nil, err
	}
	if reason != "" && r.opt.Log != nil {
		fmt.Fprintln(r.opt.Log, "hark:", reason)
	}
	r.backends[name] = &sharedBackend{be: be, refs: 1}
	return be, nil
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

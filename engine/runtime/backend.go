package runtime

import (
	"fmt"

	"github.com/harkapp/hark/engine/backends"
)

// openBackend opens the backend choice name, logging why auto used the
// CPU when a GPU was expected.
func (r *Runtime) openBackend(name string) (backends.Backend, error) {
	be, reason, err := backends.Open(name, backends.Options{Threads: r.opt.Threads, GPU: r.opt.GPU})
	if err != nil {
		return nil, err
	}
	if reason != "" && r.opt.Log != nil {
		fmt.Fprintln(r.opt.Log, "hark:", reason)
	}
	return be, nil
}

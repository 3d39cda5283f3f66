// Package backends picks the backend a model runs on. Backends are drivers
// in one list: "auto" tries them in order and takes the first that starts
// and suits this machine, the CPU last; a named backend is opened or
// fails. Nothing else in Hark constructs a backend.
//
// The list holds the CPU (engine/cpu) from the start. The GPU backends
// (metal, cuda) sit above the engine and import it, so they are added
// from above by the binary's wiring (package drivers, called by the CLI
// and the desktop app) through Register; this package imports none of
// them.
package backends

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/plan"
)

// Names accepted by Open besides the drivers' own.
const (
	Auto = "auto"
	CPU  = "cpu"
	// Metal is the Metal driver's name (macOS).
	Metal = "metal"
	// CUDA is the CUDA driver's name (NVIDIA GPUs).
	CUDA = "cuda"
)

// Backend is a plan.Backend that owns resources until Close.
type Backend interface {
	plan.Backend
	Close()
}

// Options are what every driver's Open receives.
type Options struct {
	// Threads is the number of host workers (0 = one per physical core).
	Threads int
	// GPU is the device index (--gpu) for drivers that choose among
	// several GPUs (CUDA); drivers with one system GPU (Metal) refuse a
	// non-zero index.
	GPU int
	// Log receives notes for the user, such as a GPU's one-time kernel
	// compilation (nil: discarded).
	Log io.Writer
}

// Driver is one backend kind.
type Driver struct {
	// Name is what --backend and the settings call it.
	Name string
	// Open starts the backend with the options o.
	// auto is true when the caller asked for "auto": the driver then
	// also refuses hardware it would not pick by default (an error saying
	// why). ErrNotHere means the platform lacks it: auto skips it
	// without comment.
	Open func(o Options, auto bool) (Backend, error)
	// Here says, without starting the backend, whether this machine has
	// the hardware auto would pick it on (`hark --version` and About list
	// those). Nil means always (the CPU, and stand-ins in tests).
	Here func() bool
}

// ErrNotHere is a driver's answer on a platform without its hardware.
var ErrNotHere = errors.New("not available on this platform")

var (
	mu   sync.RWMutex
	list = []Driver{{Name: CPU, Open: func(o Options, _ bool) (Backend, error) {
		return cpu.New(cpu.Options{Threads: o.Threads}), nil
	}}}
)

// Register adds d to the drivers auto tries, after those registered before
// it and before the CPU (which always starts, so it comes last). A name
// registered twice is a wiring mistake and panics.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	for _, o := range list {
		if o.Name == d.Name {
			panic("backends: driver " + d.Name + " registered twice")
		}
	}
	list = append(list[:len(list)-1:len(list)-1], d, list[len(list)-1])
}

// Here lists the backends this machine would use, in the order auto tries
// them: the registered drivers whose hardware is here, then the CPU. It
// starts none of them (see Driver.Here), so `hark --version` stays quick.
func Here() []string {
	mu.RLock()
	ds := list
	mu.RUnlock()
	var out []string
	for _, d := range ds {
		if d.Here == nil || d.Here() {
			out = append(out, d.Name)
		}
	}
	return out
}

// Names lists the accepted names, auto first, for flag help and errors.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := []string{Auto}
	for _, d := range list {
		out = append(out, d.Name)
	}
	return out
}

// Valid checks a backend name without opening it.
func Valid(name string) error {
	name = strings.ToLower(name)
	for _, n := range append(Names(), "") {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("unknown backend %q (want %s)", name, strings.Join(Names(), ", "))
}

// ValidGPU checks a GPU index (--gpu) without opening anything; whether
// that GPU exists is the driver's answer at Open.
func ValidGPU(gpu int) error {
	if gpu < 0 {
		return fmt.Errorf("--gpu %d: a GPU index is 0 or more", gpu)
	}
	return nil
}

// Open returns the backend called name ("" means auto). For auto, reason
// is non-empty when a preferred backend was skipped for a reason worth
// logging ("using the CPU: ..."); callers log it.
func Open(name string, o Options) (Backend, string, error) {
	if err := ValidGPU(o.GPU); err != nil {
		return nil, "", err
	}
	mu.RLock()
	ds := list
	mu.RUnlock()
	name = strings.ToLower(name)
	if name == "" || name == Auto {
		var why []string
		for _, d := range ds {
			b, err := d.Open(o, true)
			if err == nil {
				reason := ""
				if len(why) > 0 {
					reason = fmt.Sprintf("using %s: %s", label(d.Name), strings.Join(why, "; "))
				}
				return b, reason, nil
			}
			if !errors.Is(err, ErrNotHere) {
				why = append(why, err.Error())
			}
		}
		return nil, "", fmt.Errorf("no backend could start: %s", strings.Join(why, "; "))
	}
	for _, d := range ds {
		if d.Name == name {
			b, err := d.Open(o, false)
			if errors.Is(err, ErrNotHere) {
				return nil, "", fmt.Errorf("%s: %w", name, err)
			}
			return b, "", err
		}
	}
	return nil, "", Valid(name)
}

func label(name string) string {
	if name == CPU {
		return "the CPU"
	}
	return name
}

// Replace swaps the driver called d.Name (or adds d before the CPU) until
// the returned restore is called. For tests (backendstest) that stand in
// for hardware this machine lacks.
func Replace(d Driver) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := list
	next := make([]Driver, 0, len(old)+1)
	found := false
	for _, o := range old {
		if o.Name == d.Name {
			next, found = append(next, d), true
			continue
		}
		if o.Name == CPU && !found {
			next, found = append(next, d), true
		}
		next = append(next, o)
	}
	list = next
	return func() {
		mu.Lock()
		list = old
		mu.Unlock()
	}
}

// GPU is the name of the GPU driver auto would pick on this machine
// ("metal", "cuda"), "" when it would run on the CPU. It starts the driver
// and closes it again: call it once, not per request.
func GPU() string {
	mu.RLock()
	ds := list
	mu.RUnlock()
	for _, d := range ds {
		if d.Name == CPU {
			continue
		}
		if b, err := d.Open(Options{}, true); err == nil {
			b.Close()
			return d.Name
		}
	}
	return ""
}

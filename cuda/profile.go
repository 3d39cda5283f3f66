package cuda

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/harkapp/hark/engine/backends"
)

// Profiling (Options.Profile, $HARK_CUDA_PROFILE=1): every launch is
// bracketed by events on the stream, and after each wait the time between
// consecutive events is added to the launched function's total. The
// events cost a little on the GPU and the gaps between launches count
// towards the next kernel, so this tells where the time goes, not how
// fast an undisturbed run is. Graphs are off while profiling: a replay
// has no events between its kernels.

// profiler holds an executable's events and totals.
type profiler struct {
	events []uintptr // pool: events[i] closes launch i-1 and opens launch i
	n      int       // events recorded since the last collect
	names  []string  // function of the launch between events i and i+1
	acc    map[string]*backends.KernelTime
}

// mark records the next event on the stream; name is the function of the
// launch it closes ("" for the first event of a batch).
func (e *Exec) mark(name string) error {
	p := &e.prof
	dev := e.b.dev
	d := dev.d
	if p.n == len(p.events) {
		var ev uintptr
		if err := d.err("cuEventCreate", d.cuEventCreate(&ev, 0)); err != nil {
			return err
		}
		p.events = append(p.events, ev)
	}
	if err := d.err("cuEventRecord", d.cuEventRecord(p.events[p.n], dev.stream)); err != nil {
		return err
	}
	if name != "" {
		p.names = append(p.names, name)
	}
	p.n++
	return nil
}

// collect adds the times of the events recorded since the last collect
// (the stream is idle).
func (e *Exec) collect() error {
	p := &e.prof
	defer func() { p.n, p.names = 0, p.names[:0] }()
	if p.acc == nil {
		p.acc = map[string]*backends.KernelTime{}
	}
	d := e.b.dev.d
	for i, name := range p.names {
		if i+1 >= p.n {
			break
		}
		var ms float32
		if err := d.err("cuEventElapsedTime", d.cuEventElapsedTime(&ms, p.events[i], p.events[i+1])); err != nil {
			return fmt.Errorf("cuda: plan %s: profile: %w", e.name, err)
		}
		k := p.acc[name]
		if k == nil {
			k = &backends.KernelTime{Function: name}
			p.acc[name] = k
		}
		k.Launches++
		k.Seconds += float64(ms) / 1e3
	}
	return nil
}

// release destroys the events.
func (p *profiler) release(d *driver) {
	for _, ev := range p.events {
		d.cuEventDestroy(ev)
	}
	p.events, p.n, p.names = nil, 0, nil
}

// addProfile adds the totals of acc to into.
func addProfile(into map[string]*backends.KernelTime, acc map[string]*backends.KernelTime) {
	for name, k := range acc {
		t := into[name]
		if t == nil {
			t = &backends.KernelTime{Function: name}
			into[name] = t
		}
		t.Launches += k.Launches
		t.Seconds += k.Seconds
	}
}

// Profile returns the GPU time per function since ResetStats, over every
// executable of the backend, most time first; empty unless
// Options.Profile is set.
func (b *Backend) Profile() []backends.KernelTime {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	all := map[string]*backends.KernelTime{}
	addProfile(all, b.prof)
	for e := range b.execs {
		addProfile(all, e.prof.acc)
	}
	out := make([]backends.KernelTime, 0, len(all))
	for _, k := range all {
		out = append(out, *k)
	}
	slices.SortFunc(out, func(a, b backends.KernelTime) int {
		if c := cmp.Compare(b.Seconds, a.Seconds); c != 0 {
			return c
		}
		return cmp.Compare(a.Function, b.Function)
	})
	return out
}

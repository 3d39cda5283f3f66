package msltest

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Backend runs plans through Hark's MSL kernels on the executor. It
// implements plan.Backend; every dispatch becomes the launches
// shaders.LaunchFor gives, exactly as the Metal backend runs it.
type Backend struct {
	lib    *Library
	tuning shaders.Tuning
	// dev, when set, runs the plans on a GPU instead of the executor (the
	// same kernel tests against a real device: see check.go's Device).
	dev TunedLoader
}

// TunedLoader is a GPU backend that loads a plan with a given kernel
// tuning (cuda.Backend).
type TunedLoader interface {
	Name() string
	LoadTuned(p *plan.Plan, t shaders.Tuning) (plan.Executable, error)
}

// WithTuning returns b with other kernel tuning (same library or device).
func (b *Backend) WithTuning(t shaders.Tuning) *Backend {
	return &Backend{lib: b.lib, tuning: t, dev: b.dev}
}

// Device returns the GPU backend the tests run on, or nil for the executor.
func (b *Backend) Device() TunedLoader { return b.dev }

// New compiles (or loads from the cache) the kernel library.
func New() (*Backend, error) {
	lib, err := Shaders()
	if err != nil {
		return nil, err
	}
	return &Backend{lib: lib, tuning: shaders.Default}, nil
}

// Library is the backend's compiled kernel library.
func (b *Backend) Library() *Library { return b.lib }

// Name implements plan.Backend.
func (b *Backend) Name() string {
	if b.dev != nil {
		return "msltest on " + b.dev.Name()
	}
	return "msltest"
}

// maxBufferBytes bounds the non-weight buffers of one plan.
const maxBufferBytes = 64 << 30

// dummyBytes is the size of the zeroed buffer bound to absent bindings.
const dummyBytes = 64 << 10

// Load implements plan.Backend: Scratch, State and IO buffers are
// allocated zeroed, weights are used in place.
func (b *Backend) Load(p *plan.Plan) (plan.Executable, error) {
	if b.dev != nil {
		return b.dev.LoadTuned(p, b.tuning)
	}
	if err := plan.CheckLoad(p); err != nil {
		return nil, fmt.Errorf("msltest: %w", err)
	}
	if t := b.tuning.ForPlan(p); t != b.tuning {
		b = b.WithTuning(t)
	}
	e := &Exec{b: b, name: p.Name, dummy: dummyBuffer(), weights: make([]bool, len(p.Buffers)), tickets: make([]uint32, shaders.TicketWords)}
	e.StepRunner = plan.NewStepRunner(&e.mu, e.ready, e.runPass)
	e.layouts = shaders.Layouts(p, &b.tuning)
	var total int64
	for i, bd := range p.Buffers {
		var mem []byte
		switch bd.Kind {
		case plan.BufWeights:
			// CheckLoad checked its length; stacked parts are joined here,
			// and repacked as the CUDA host uploads them
			mem = bd.WeightBytes()
			if e.layouts != nil && e.layouts[i].Repacked() {
				rp, err := e.layouts[i].Repack(mem)
				if err != nil {
					return nil, fmt.Errorf("msltest: plan %s: buffer %q: %w", p.Name, bd.Name, err)
				}
				mem = rp
			}
			if b.tuning.Align16 == shaders.Aligned16 && uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%16 != 0 {
				// the tuning's promise, kept as the CUDA host's allocations keep it
				a := alignedBytes(int64(len(mem)))
				copy(a, mem)
				mem = a
			}
			e.weights[len(e.bufs)] = true
		case plan.Scratch, plan.State, plan.IO:
			if bd.Size < 0 || bd.Size > maxBufferBytes || total+bd.Size > maxBufferBytes {
				return nil, fmt.Errorf("msltest: plan %s: buffer %q: bad size %d", p.Name, bd.Name, bd.Size)
			}
			total += bd.Size
			mem = e.guarded(bd.Size)
		default:
			return nil, fmt.Errorf("msltest: plan %s: buffer %q has unknown kind %d", p.Name, bd.Name, bd.Kind)
		}
		e.bufs = append(e.bufs, mem)
	}
	for _, ps := range p.Passes {
		e.passes = append(e.passes, append([]plan.Dispatch(nil), ps.Ops...))
		e.names = append(e.names, ps.Name)
	}
	// Every kernel function the plan can reach must exist; launches depend
	// on per-step values only through their geometry, so a zero step
	// finds the function names.
	var zero plan.Vars
	for pi, ops := range e.passes {
		for i := range ops {
			d := ops[i].Resolved(&zero)
			ls, err := shaders.LaunchFor(&d, &b.tuning, nil)
			if err != nil {
				return nil, fmt.Errorf("msltest: plan %s/%s op %d: %w (missing kernels: %v)", p.Name, e.names[pi], i, err, shaders.Missing())
			}
			if err := shaders.ForLayouts(e.layouts, &d, ls); err != nil {
				return nil, fmt.Errorf("msltest: plan %s/%s op %d: %w", p.Name, e.names[pi], i, err)
			}
			for _, l := range ls {
				if !b.lib.Has(l.Function) {
					return nil, fmt.Errorf("msltest: plan %s/%s op %d (%s): no MSL function %q", p.Name, e.names[pi], i, d.Kernel, l.Function)
				}
			}
		}
	}
	return e, nil
}

var (
	dummyOnce sync.Once
	dummyMem  []byte
)

// dummyBuffer is the zeroed memory bound to absent bindings. It is mapped
// read-only where the OS allows, so a kernel that writes to a binding it
// should have checked (args.bind_mask) crashes the test at once instead
// of leaving garbage for the next dispatch to read.
func dummyBuffer() []byte {
	dummyOnce.Do(func() {
		m, err := syscall.Mmap(-1, 0, dummyBytes, syscall.PROT_READ, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			m = alignedBytes(dummyBytes)
		}
		dummyMem = m
	})
	return dummyMem
}

// guarded returns n zeroed bytes that end 0..15 bytes before an
// inaccessible page, so a kernel reading or writing past the end of a
// buffer crashes the test instead of silently using a neighbour's bytes
// (the start is 16-byte aligned for vector loads).
func (e *Exec) guarded(n int64) []byte {
	page := int64(os.Getpagesize())
	padded := (n + 15) &^ 15
	body := (padded + page - 1) / page * page
	m, err := syscall.Mmap(-1, 0, int(body+page), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return alignedBytes(n)
	}
	if err := syscall.Mprotect(m[body:], syscall.PROT_NONE); err != nil {
		_ = syscall.Munmap(m) // falling back to plain memory; the mapping was never used
		return alignedBytes(n)
	}
	e.maps = append(e.maps, m)
	start := body - padded
	return m[start : start+n : start+n]
}

func alignedBytes(n int64) []byte {
	raw := make([]byte, n+63)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))) & 63
	return raw[off : off+int(n) : off+int(n)]
}

// Exec is a plan loaded on the executor; it implements plan.Executable.
type Exec struct {
	plan.StepRunner // Run and RunSeq: ready, then runPass, under mu
	mu              sync.Mutex
	b               *Backend
	name            string
	bufs            [][]byte
	weights         []bool           // read-only: kernels and the host may not write them
	layouts         []shaders.Layout // the weights' upload layouts (shaders.Layouts)
	passes          [][]plan.Dispatch
	names           []string
	dummy           []byte
	maps            [][]byte // guarded mappings, unmapped by Close
	scratch         []byte
	tickets         []uint32 // shaders.TicketWords, zero between launches
	launches        []shaders.Launch
	closed          bool
	// Launches counts the kernel launches run so far.
	Launches int
}

func (e *Exec) ready(pass int) error {
	if err := plan.CheckPass(e.name, e.closed, pass, len(e.passes)); err != nil {
		return fmt.Errorf("msltest: %w", err)
	}
	return nil
}

func (e *Exec) runPass(pass int, vars *plan.Vars) error {
	var args [shaders.ArgsSize]byte
	for i := range e.passes[pass] {
		d := e.passes[pass][i].Resolved(vars)
		if err := e.dispatch(&d, &args); err != nil {
			return fmt.Errorf("msltest: plan %s/%s op %d (%s): %w", e.name, e.names[pass], i, d.Kernel, err)
		}
	}
	return nil
}

func (e *Exec) dispatch(d *plan.Dispatch, args *[shaders.ArgsSize]byte) error {
	var err error
	e.launches, err = shaders.LaunchFor(d, &e.b.tuning, e.launches[:0])
	if err != nil {
		return err
	}
	if err := shaders.ForLayouts(e.layouts, d, e.launches); err != nil {
		return err
	}
	shaders.Args(d, args)
	var bufs [16]unsafe.Pointer
	for i := range bufs {
		bufs[i] = unsafe.Pointer(unsafe.SliceData(e.dummy))
	}
	for i := 0; i < int(d.NBind); i++ {
		bd := d.Bind[i]
		if bd.Buf == plan.NoBuf {
			continue
		}
		if int(bd.Buf) >= len(e.bufs) {
			return fmt.Errorf("binding %d: buffer %d of %d", i, bd.Buf, len(e.bufs))
		}
		m := e.bufs[bd.Buf]
		if bd.Off > uint64(len(m)) {
			return fmt.Errorf("binding %d: offset %d beyond %d bytes", i, bd.Off, len(m))
		}
		if len(m) == 0 {
			continue
		}
		bufs[i] = unsafe.Add(unsafe.Pointer(unsafe.SliceData(m)), bd.Off)
	}
	bufs[shaders.ArgsIndex] = unsafe.Pointer(&args[0])
	var need uint32
	for _, l := range e.launches {
		need = max(need, l.Scratch)
	}
	if need > 0 {
		if uint32(len(e.scratch)) < need {
			e.scratch = e.guarded(int64(need))
		}
		// GPU scratch starts as garbage: poison it (NaN / -1).
		s := e.scratch[:need]
		for i := range s {
			s[i] = 0xff
		}
		bufs[shaders.ScratchIndex] = unsafe.Pointer(unsafe.SliceData(e.scratch))
	}
	bufs[shaders.TicketIndex] = unsafe.Pointer(unsafe.SliceData(e.tickets))
	for li := range e.launches {
		if e.launches[li].Tickets > shaders.TicketWords {
			return fmt.Errorf("%s: %d ticket words, the executor has %d", e.launches[li].Function, e.launches[li].Tickets, shaders.TicketWords)
		}
		if err := e.b.lib.Run(&e.launches[li], &bufs); err != nil {
			return err
		}
		// a ticket launch's last arrivals leave its words zero for the next
		for w, v := range e.tickets[:e.launches[li].Tickets] {
			if v != 0 {
				return fmt.Errorf("%s: ticket word %d left at %d", e.launches[li].Function, w, v)
			}
		}
		e.Launches++
	}
	return nil
}

func (e *Exec) span(buf plan.BufID, off int64, n int) ([]byte, error) {
	if e.closed {
		return nil, fmt.Errorf("msltest: plan %s: executable is closed", e.name)
	}
	if int(buf) >= len(e.bufs) {
		return nil, fmt.Errorf("msltest: plan %s: buffer %d of %d", e.name, buf, len(e.bufs))
	}
	m := e.bufs[buf]
	if off < 0 || off > int64(len(m)) || int64(n) > int64(len(m))-off {
		return nil, fmt.Errorf("msltest: plan %s: %d bytes at %d outside buffer %d (%d bytes)", e.name, n, off, buf, len(m))
	}
	return m[off : off+int64(n)], nil
}

// Write implements plan.Executable.
func (e *Exec) Write(buf plan.BufID, off int64, src []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	dst, err := e.span(buf, off, len(src))
	if err != nil {
		return err
	}
	if e.weights[buf] {
		return fmt.Errorf("msltest: plan %s: buffer %d holds weights and is read-only", e.name, buf)
	}
	copy(dst, src)
	return nil
}

// Read implements plan.Executable.
func (e *Exec) Read(buf plan.BufID, off int64, dst []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	src, err := e.span(buf, off, len(dst))
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

// Close implements plan.Executable.
func (e *Exec) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	e.bufs = nil
	e.scratch = nil
	for _, m := range e.maps {
		_ = syscall.Munmap(m) // closing: an unmap error has no one to go to
	}
	e.maps = nil
	return nil
}

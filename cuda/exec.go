package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Backend runs plans on one CUDA GPU. It implements plan.Backend.
type Backend struct {
	dev    *device
	opt    Options
	tuning shaders.Tuning
	mu     sync.Mutex
	closed bool
	// weights are uploaded once per distinct tensor memory and shared by
	// every plan of the model that binds them (encoder, decoder, beams).
	weights map[weightKey]*devWeights
	rng     *rand.Rand
}

type weightKey struct {
	p uintptr
	n int64
}

type devWeights struct {
	ptr  dptr
	refs int
}

// New opens GPU o.Device. It returns an error wrapping ErrUnavailable when
// there is no driver or GPU.
func New(o Options) (*Backend, error) {
	o = envOptions(o)
	dev, err := openDevice(o.Device)
	if err != nil {
		return nil, err
	}
	seed := o.PermuteSeed
	return &Backend{dev: dev, opt: o, tuning: Tuning(), weights: map[weightKey]*devWeights{},
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Name implements plan.Backend.
func (b *Backend) Name() string { return "cuda" }

// Info describes the GPU.
func (b *Backend) Info() Info { return b.dev.info }

// Close releases the GPU. Executables loaded from b must be closed first.
func (b *Backend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.dev.do(func() error {
			for _, w := range b.weights {
				b.dev.d.cuMemFree(w.ptr)
			}
			return nil
		})
		b.weights = nil
		b.dev.close()
	}
}

// maxBufferBytes bounds the non-weights buffers of one plan, as the other
// backends do, so a corrupt plan cannot ask for an absurd allocation.
const maxBufferBytes = 64 << 30

// dummySize is the zeroed buffer bound for absent optional bindings.
const dummySize = 64 << 10

// params is __hark::Params of msl_cuda.h: the one kernel parameter.
type params struct {
	bufs [16]uint64
	args [shaders.ArgsSize / 4]uint32
	perm [2]uint32
}

// Exec is a plan loaded on the GPU; it implements plan.Executable. Calls
// are serialised.
type Exec struct {
	mu      sync.Mutex
	b       *Backend
	name    string
	plan    *plan.Plan
	sizes   []uint64
	ptrs    []dptr // device address of every plan buffer
	kinds   []plan.BufKind
	owned   []dptr // allocations to free at Close (not the shared weights)
	weights []weightKey
	dummy   dptr
	passes  []plan.Pass
	tuning  shaders.Tuning
	arena   dptr
	arenaN  uint64
	staging unsafe.Pointer // page-locked host memory for Read/Write
	stageN  uint64
	closed  bool
	// per-dispatch state, kept here so running allocates nothing
	acc      []plan.Access
	launches []shaders.Launch
	argb     [shaders.ArgsSize]byte
	prm      params
	prmPtr   unsafe.Pointer
	constVal [8]byte
	// Launches counts kernel launches since load.
	Launches int
}

// Load implements plan.Backend: weights are copied to the GPU once (shared
// between plans that bind the same tensor memory), Scratch, State and IO
// buffers are allocated and zeroed, and every function the plan can reach
// is looked up.
func (b *Backend) Load(p *plan.Plan) (plan.Executable, error) { return b.LoadTuned(p, b.tuning) }

// LoadTuned is Load with other kernel tuning (the kernel tests run every
// tuning the executor runs).
func (b *Backend) LoadTuned(p *plan.Plan, t shaders.Tuning) (plan.Executable, error) {
	if p == nil {
		return nil, errors.New("cuda: nil plan")
	}
	for _, ps := range p.Passes {
		if ps == nil {
			return nil, fmt.Errorf("cuda: plan %s: nil pass", p.Name)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("cuda: backend is closed")
	}
	e := &Exec{b: b, name: p.Name, plan: p, tuning: t}
	e.prmPtr = unsafe.Pointer(&e.prm)
	err := b.dev.do(func() error { return e.load(p) })
	if err != nil {
		b.dev.do(func() error { e.release(); return nil })
		return nil, err
	}
	return e, nil
}

func (e *Exec) load(p *plan.Plan) error {
	d := e.b.dev.d
	alloc := func(n int64, what string) (dptr, error) {
		var ptr dptr
		if err := d.err("cuMemAlloc", d.cuMemAlloc(&ptr, uint64(max(n, 4)))); err != nil {
			return 0, fmt.Errorf("cuda: plan %s: %s (%d bytes): %w", p.Name, what, n, err)
		}
		e.owned = append(e.owned, ptr)
		return ptr, nil
	}
	var err error
	if e.dummy, err = alloc(dummySize, "dummy binding"); err != nil {
		return err
	}
	if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.dummy, 0, dummySize, e.b.dev.stream)); err != nil {
		return err
	}
	e.sizes = make([]uint64, len(p.Buffers))
	e.ptrs = make([]dptr, len(p.Buffers))
	e.kinds = make([]plan.BufKind, len(p.Buffers))
	var total int64
	for i, bd := range p.Buffers {
		if bd.Size < 0 {
			return fmt.Errorf("cuda: plan %s: buffer %q has negative size %d", p.Name, bd.Name, bd.Size)
		}
		e.sizes[i], e.kinds[i] = uint64(bd.Size), bd.Kind
		switch bd.Kind {
		case plan.BufWeights:
			if int64(len(bd.Data)) < bd.Size {
				return fmt.Errorf("cuda: plan %s: weights %q: %d bytes of data for %d", p.Name, bd.Name, len(bd.Data), bd.Size)
			}
			if bd.Size == 0 {
				e.ptrs[i] = e.dummy
				continue
			}
			k := weightKey{p: uintptr(unsafe.Pointer(unsafe.SliceData(bd.Data))), n: bd.Size}
			w := e.b.weights[k]
			if w == nil {
				w = &devWeights{}
				if err := d.err("cuMemAlloc", d.cuMemAlloc(&w.ptr, uint64(bd.Size))); err != nil {
					return fmt.Errorf("cuda: plan %s: weights %q (%d bytes): %w", p.Name, bd.Name, bd.Size, err)
				}
				if err := d.err("cuMemcpyHtoD", d.cuMemcpyHtoD(w.ptr, unsafe.Pointer(unsafe.SliceData(bd.Data)), uint64(bd.Size))); err != nil {
					d.cuMemFree(w.ptr)
					return fmt.Errorf("cuda: plan %s: uploading weights %q: %w", p.Name, bd.Name, err)
				}
				e.b.weights[k] = w
			}
			w.refs++
			e.weights = append(e.weights, k)
			e.ptrs[i] = w.ptr
		case plan.Scratch, plan.State, plan.IO:
			if bd.Data != nil {
				return fmt.Errorf("cuda: plan %s: buffer %q is not a weights buffer but has Data", p.Name, bd.Name)
			}
			if bd.Size > maxBufferBytes || total+bd.Size > maxBufferBytes {
				return fmt.Errorf("cuda: plan %s: buffer %q: %d bytes is too large", p.Name, bd.Name, bd.Size)
			}
			total += bd.Size
			ptr, err := alloc(bd.Size, "buffer "+bd.Name)
			if err != nil {
				return err
			}
			fill := uint8(0)
			if bd.Kind == plan.Scratch && e.b.opt.Poison {
				fill = 0xff
			}
			if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(ptr, fill, uint64(max(bd.Size, 4)), e.b.dev.stream)); err != nil {
				return err
			}
			e.ptrs[i] = ptr
		default:
			return fmt.Errorf("cuda: plan %s: buffer %q has unknown kind %d", p.Name, bd.Name, bd.Kind)
		}
	}
	for _, ps := range p.Passes {
		e.passes = append(e.passes, plan.Pass{Name: ps.Name, Ops: append([]plan.Dispatch(nil), ps.Ops...)})
	}
	// Every function the plan reaches must exist; launches depend on the
	// step only through their geometry, so a zero step names them.
	var zero plan.Vars
	for pi, ps := range e.passes {
		for i := range ps.Ops {
			r := ps.Ops[i].Resolved(&zero)
			ls, err := shaders.LaunchFor(&r, &e.tuning, nil)
			if err != nil {
				return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", p.Name, ps.Name, i, r.Kernel, err)
			}
			for _, l := range ls {
				if _, err := e.b.dev.function(l.Function); err != nil {
					return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", p.Name, e.passes[pi].Name, i, r.Kernel, err)
				}
			}
		}
	}
	return e.sync("load")
}

func (e *Exec) sync(what string) error {
	d := e.b.dev.d
	if err := d.err("cuStreamSynchronize", d.cuStreamSynchronize(e.b.dev.stream)); err != nil {
		return fmt.Errorf("cuda: plan %s: %s: %w", e.name, what, err)
	}
	return nil
}

// Run implements plan.Executable: the pass's launches are queued on the
// stream and waited for.
func (e *Exec) Run(pass int, vars *plan.Vars) error {
	return e.RunSeq(pass, unsafe.Slice(vars, 1))
}

// RunSeq implements plan.Executable: every step is queued before one wait.
func (e *Exec) RunSeq(pass int, steps []plan.Vars) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("cuda: plan %s: executable is closed", e.name)
	}
	if pass < 0 || pass >= len(e.passes) {
		return fmt.Errorf("cuda: plan %s: pass %d out of range (%d passes)", e.name, pass, len(e.passes))
	}
	dev := e.b.dev
	dev.mu.Lock()
	defer dev.mu.Unlock()
	return dev.do(func() error {
		ops := e.passes[pass].Ops
		for si := range steps {
			for i := range ops {
				if err := e.dispatch(&ops[i], &steps[si]); err != nil {
					if len(steps) > 1 {
						err = fmt.Errorf("step %d: %w", si, err)
					}
					e.sync("after a failed dispatch")
					return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[pass].Name, i, ops[i].Kernel, err)
				}
			}
		}
		return e.sync("pass " + e.passes[pass].Name)
	})
}

// dispatch checks and queues one dispatch: patches, launches, the bounds
// of every binding against the kernel contract (a GPU kernel checks none),
// per-dispatch scratch, then each launch.
func (e *Exec) dispatch(op *plan.Dispatch, vars *plan.Vars) error {
	d := e.b.dev.d
	for _, p := range op.Patch[:op.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		if v < 0 || (p.Target < plan.PatchOffset0 && v > math.MaxUint32) {
			return fmt.Errorf("patch of field %d gives %d (variable %d = %d)", p.Target, v, p.Var, vars[p.Var])
		}
	}
	r := op.Resolved(vars)
	var err error
	if e.launches, err = shaders.LaunchFor(&r, &e.tuning, e.launches[:0]); err != nil {
		return err
	}
	if len(e.launches) == 0 {
		return nil
	}
	if err := e.checkBounds(&r); err != nil {
		return err
	}
	var scratch uint64
	for _, l := range e.launches {
		scratch = max(scratch, uint64(l.Scratch))
	}
	pr := &e.prm
	for i := range pr.bufs {
		pr.bufs[i] = e.dummy
	}
	for j := 0; j < int(r.NBind); j++ {
		bd := r.Bind[j]
		if bd.Buf != plan.NoBuf {
			pr.bufs[j] = e.ptrs[bd.Buf] + bd.Off
		}
	}
	if scratch > 0 {
		if err := e.ensureArena(scratch); err != nil {
			return err
		}
		if e.b.opt.Poison {
			if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.arena, 0xff, scratch, e.b.dev.stream)); err != nil {
				return err
			}
		}
		pr.bufs[shaders.ScratchIndex] = e.arena
	}
	shaders.Args(&r, &e.argb)
	for i := range pr.args {
		pr.args[i] = binary.LittleEndian.Uint32(e.argb[4*i:])
	}
	for li := range e.launches {
		if err := e.launch(&e.launches[li]); err != nil {
			return err
		}
	}
	return nil
}

// checkBounds rejects a dispatch whose bindings, by the kernel contract
// (plan.Dispatch.Accesses), would reach past their buffers.
func (e *Exec) checkBounds(r *plan.Dispatch) error {
	for j := 0; j < int(r.NBind); j++ {
		if bd := r.Bind[j]; bd.Buf != plan.NoBuf && bd.Off > e.sizes[bd.Buf] {
			return fmt.Errorf("binding %d: offset %d is past buffer %q (%d bytes)", j, bd.Off, e.plan.Buffers[bd.Buf].Name, e.sizes[bd.Buf])
		}
	}
	e.acc = r.Accesses(e.acc[:0])
	for _, a := range e.acc {
		b := r.Bind[a.Slot]
		if a.Hi == plan.ToEnd {
			continue // to the end of the buffer: within it by definition
		}
		if hi := plan.SatAdd(b.Off, a.Hi); hi > e.sizes[b.Buf] {
			return fmt.Errorf("binding %d of buffer %q: bytes [%d, %d) overrun its %d bytes", a.Slot, e.plan.Buffers[b.Buf].Name, plan.SatAdd(b.Off, a.Lo), hi, e.sizes[b.Buf])
		}
	}
	return nil
}

func (e *Exec) launch(l *shaders.Launch) error {
	dev := e.b.dev
	d := dev.d
	f, err := dev.function(l.Function)
	if err != nil {
		return err
	}
	threads := uint64(l.Threads[0]) * uint64(l.Threads[1]) * uint64(l.Threads[2])
	if threads == 0 || l.Groups[0] == 0 || l.Groups[1] == 0 || l.Groups[2] == 0 {
		return nil // empty grid
	}
	if threads > uint64(f.maxThreads) {
		return fmt.Errorf("%s: %d threads per threadgroup, the function allows %d", l.Function, threads, f.maxThreads)
	}
	shared := (l.Threadgroup + 15) &^ 15
	if shared > f.dynSet {
		return fmt.Errorf("%s: %d bytes of threadgroup memory, the GPU allows %d beside the function's %d static bytes", l.Function, shared, f.dynSet, f.static)
	}
	for _, c := range l.Constants {
		g, ok := dev.consts[c.Index]
		if !ok {
			return fmt.Errorf("%s: no function constant with index %d", l.Function, c.Index)
		}
		binary.LittleEndian.PutUint32(e.constVal[:], c.Value)
		if g.size == 1 && c.Value != 0 {
			e.constVal[0] = 1 // the one-byte constants are bools
		}
		// pageable source: the copy is staged before the call returns,
		// and stream order puts it before the launch
		if err := d.err("cuMemcpyHtoDAsync", d.cuMemcpyHtoDAsync(g.ptr, unsafe.Pointer(&e.constVal[0]), uint64(g.size), dev.stream)); err != nil {
			return fmt.Errorf("%s: setting %s: %w", l.Function, g.name, err)
		}
	}
	e.prm.perm = [2]uint32{}
	if e.b.opt.PermuteSeed != 0 {
		n := uint64(l.Groups[0]) * uint64(l.Groups[1]) * uint64(l.Groups[2])
		if n > 1 && n < 1<<32 {
			a := uint64(1 + e.b.rng.Uint64N(n-1))
			for gcd(a, n) != 1 {
				a = 1 + e.b.rng.Uint64N(n-1)
			}
			e.prm.perm = [2]uint32{uint32(a), uint32(e.b.rng.Uint64N(n))}
		}
	}
	r := d.cuLaunchKernel(f.h, l.Groups[0], l.Groups[1], l.Groups[2], l.Threads[0], l.Threads[1], l.Threads[2],
		shared, dev.stream, &e.prmPtr, nil)
	runtime.KeepAlive(e)
	if err := d.err("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("%s (%v groups of %v threads, %d bytes shared): %w", l.Function, l.Groups, l.Threads, shared, err)
	}
	e.Launches++
	return nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ensureArena grows the per-dispatch scratch to n bytes. Work queued
// before may still use the old arena, so the stream is drained first.
func (e *Exec) ensureArena(n uint64) error {
	if e.arenaN >= n {
		return nil
	}
	d := e.b.dev.d
	size := max(n, 2*e.arenaN, 64<<10)
	if e.arena != 0 {
		if err := e.sync("growing scratch"); err != nil {
			return err
		}
		d.cuMemFree(e.arena)
		e.arena, e.arenaN = 0, 0
	}
	if err := d.err("cuMemAlloc", d.cuMemAlloc(&e.arena, size)); err != nil {
		return fmt.Errorf("per-dispatch scratch of %d bytes: %w", size, err)
	}
	e.arenaN = size
	return nil
}

// Write implements plan.Executable for IO and State buffers.
func (e *Exec) Write(buf plan.BufID, off int64, src []byte) error {
	return e.copyHost(buf, off, src, true)
}

// Read implements plan.Executable for IO and State buffers.
func (e *Exec) Read(buf plan.BufID, off int64, dst []byte) error {
	return e.copyHost(buf, off, dst, false)
}

func (e *Exec) copyHost(buf plan.BufID, off int64, mem []byte, write bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	what := "read"
	if write {
		what = "write"
	}
	if e.closed {
		return fmt.Errorf("cuda: plan %s: executable is closed", e.name)
	}
	if int(buf) >= len(e.ptrs) {
		return fmt.Errorf("cuda: plan %s: %s of unknown buffer %d", e.name, what, buf)
	}
	name := e.plan.Buffers[buf].Name
	switch e.kinds[buf] {
	case plan.BufWeights:
		return fmt.Errorf("cuda: plan %s: buffer %q holds weights and is read-only", e.name, name)
	case plan.Scratch:
		return fmt.Errorf("cuda: plan %s: buffer %q is scratch; only IO and State buffers can be read or written", e.name, name)
	}
	size := int64(e.sizes[buf])
	if off < 0 || off > size || int64(len(mem)) > size-off {
		return fmt.Errorf("cuda: plan %s: %s of %d bytes at %d is outside buffer %q (%d bytes)", e.name, what, len(mem), off, name, size)
	}
	if len(mem) == 0 {
		return nil
	}
	dev := e.b.dev
	dev.mu.Lock()
	defer dev.mu.Unlock()
	return dev.do(func() error {
		d := dev.d
		if err := e.ensureStaging(uint64(len(mem))); err != nil {
			return err
		}
		stage := unsafe.Slice((*byte)(e.staging), len(mem))
		at := e.ptrs[buf] + uint64(off)
		if write {
			copy(stage, mem)
			if err := d.err("cuMemcpyHtoDAsync", d.cuMemcpyHtoDAsync(at, e.staging, uint64(len(mem)), dev.stream)); err != nil {
				return fmt.Errorf("cuda: plan %s: writing %q: %w", e.name, name, err)
			}
			return e.sync("writing " + name)
		}
		if err := d.err("cuMemcpyDtoHAsync", d.cuMemcpyDtoHAsync(e.staging, at, uint64(len(mem)), dev.stream)); err != nil {
			return fmt.Errorf("cuda: plan %s: reading %q: %w", e.name, name, err)
		}
		if err := e.sync("reading " + name); err != nil {
			return err
		}
		copy(mem, stage)
		return nil
	})
}

// ensureStaging grows the page-locked staging buffer to n bytes.
func (e *Exec) ensureStaging(n uint64) error {
	if e.stageN >= n {
		return nil
	}
	d := e.b.dev.d
	if e.staging != nil {
		d.cuMemFreeHost(e.staging)
		e.staging, e.stageN = nil, 0
	}
	size := max(n, 64<<10)
	if err := d.err("cuMemAllocHost", d.cuMemAllocHost(&e.staging, size)); err != nil {
		return fmt.Errorf("cuda: page-locked staging of %d bytes: %w", size, err)
	}
	e.stageN = size
	return nil
}

// Close implements plan.Executable.
func (e *Exec) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.b.mu.Lock()
	defer e.b.mu.Unlock()
	return e.b.dev.do(func() error {
		e.release()
		return nil
	})
}

// release frees the executable's memory (context current, b.mu held).
func (e *Exec) release() {
	d := e.b.dev.d
	d.cuStreamSynchronize(e.b.dev.stream)
	for _, p := range e.owned {
		d.cuMemFree(p)
	}
	if e.arena != 0 {
		d.cuMemFree(e.arena)
	}
	if e.staging != nil {
		d.cuMemFreeHost(e.staging)
	}
	for _, k := range e.weights {
		if w := e.b.weights[k]; w != nil {
			if w.refs--; w.refs == 0 {
				d.cuMemFree(w.ptr)
				delete(e.b.weights, k)
			}
		}
	}
	e.owned, e.weights, e.arena, e.staging, e.plan = nil, nil, 0, nil, nil
}

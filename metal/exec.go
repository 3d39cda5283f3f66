package metal

import (
	"fmt"
	"sync"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Backend runs plans on a Metal device. It implements plan.Backend.
type Backend struct {
	dev    device
	info   Info
	tuning shaders.Tuning
	// launch and missing are shaders.LaunchFor and shaders.Missing; tests
	// substitute their own while the kernels are written elsewhere.
	launch  launchFunc
	missing func() []plan.Kernel
	mu      sync.Mutex
	closed  bool
	total   backends.MetalStats // summed over every executable loaded from b
}

// Stats sums the counters of every executable loaded from b (closed ones
// included): command buffers, dispatches and GPU time for hark bench.
func (b *Backend) Stats() backends.MetalStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

func (b *Backend) add(s backends.MetalStats) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total.CommandBuffers += s.CommandBuffers
	b.total.Steps += s.Steps
	b.total.Dispatches += s.Dispatches
	b.total.Launches += s.Launches
	b.total.Barriers += s.Barriers
	b.total.GPUSeconds += s.GPUSeconds
}

type launchFunc func(d *plan.Dispatch, t *shaders.Tuning, dst []shaders.Launch) ([]shaders.Launch, error)

// newBackend wraps a device (the real one on darwin, a fake in tests).
func newBackend(dev device) *Backend {
	in := dev.info()
	t := shaders.TuningFor(in.Family)
	if !in.DeviceFence {
		// before MSL 3.2 nothing orders one threadgroup's writes before
		// another's reads, which the sampler's and the Whisper
		// selection's last groups rely on
		t.SampleSegment = shaders.SampleOneSegment
		t.WhisperSegment = shaders.WhisperOneSegment
	}
	return &Backend{dev: dev, info: in, tuning: t, launch: shaders.LaunchFor, missing: shaders.Missing}
}

// Name implements plan.Backend.
func (b *Backend) Name() string { return "metal" }

// Info describes the device.
func (b *Backend) Info() Info { return b.info }

// Tuning is the kernel tuning of the device's family.
func (b *Backend) Tuning() shaders.Tuning { return b.tuning }

// Close releases the device. Executables loaded from b must be closed
// first.
func (b *Backend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.dev.close()
	}
}

// maxBufferBytes bounds one non-weights buffer of a plan, as the CPU
// backend does, so a corrupt plan cannot ask for an absurd allocation.
const maxBufferBytes = 64 << 30

// dummySize is the zeroed buffer bound for absent optional bindings.
const dummySize = 4096

// devBind is where a plan buffer lives on the device: a buffer and the
// offset of the plan buffer's byte 0 in it.
type devBind struct {
	h    handle
	base uint64
}

// Exec is a plan loaded on a Metal device; it implements plan.Executable.
// Calls are serialised.
type Exec struct {
	mu      sync.Mutex
	dev     device
	backend *Backend
	maxTG   uint32 // the device's threadgroup memory (0: unknown)
	tuning  shaders.Tuning
	launch  launchFunc
	name    string
	plan    *plan.Plan // keeps the weights' memory alive while wrapped
	sizes   []uint64   // declared size of every plan buffer
	binds   []devBind  // per plan buffer
	host    [][]byte   // contents of shared IO/State buffers (nil otherwise)
	kinds   []plan.BufKind
	owned   []buffer // every device buffer to release at Close
	dummy   buffer
	passes  []plan.Pass
	memo    [][]opMemo // per pass, per op
	pipes   map[pipeKey]pipeline
	arena   buffer // per-dispatch scratch (Launch.Scratch), grown on demand
	closed  bool
	stats   backends.MetalStats
	enc     encodeState
}

// Load implements plan.Backend: it places the weights (zero-copy regions of
// the memory map; small and misaligned tensors copied), allocates IO and State buffers in
// shared memory and Scratch in private memory, checks that every kernel of
// the plan has an MSL kernel, and compiles the pipelines it can resolve
// ahead of the first step.
func (b *Backend) Load(p *plan.Plan) (plan.Executable, error) {
	if err := plan.CheckLoad(p); err != nil {
		return nil, fmt.Errorf("metal: %w", err)
	}
	if err := checkKernels(p, b.missing()); err != nil {
		return nil, err
	}
	e := &Exec{dev: b.dev, backend: b, maxTG: b.info.MaxThreadgroupMemory, tuning: b.tuning.ForPlan(p), launch: b.launch, name: p.Name, plan: p, pipes: map[pipeKey]pipeline{}}
	if err := e.allocate(p, b.info); err != nil {
		e.release()
		return nil, err
	}
	for _, ps := range p.Passes {
		e.passes = append(e.passes, plan.Pass{Name: ps.Name, Ops: append([]plan.Dispatch(nil), ps.Ops...)})
		e.memo = append(e.memo, make([]opMemo, len(ps.Ops)))
	}
	if err := e.prewarm(); err != nil {
		e.release()
		return nil, err
	}
	return e, nil
}

// checkKernels fails when the plan uses a kernel with no MSL version yet,
// naming the first use, so a model fails at load rather than mid-run.
func checkKernels(p *plan.Plan, absent []plan.Kernel) error {
	missing := map[plan.Kernel]bool{}
	for _, k := range absent {
		missing[k] = true
	}
	for _, ps := range p.Passes {
		for i, d := range ps.Ops {
			if missing[d.Kernel] {
				return fmt.Errorf("metal: plan %s/%s op %d: kernel %s has no MSL implementation yet", p.Name, ps.Name, i, d.Kernel)
			}
		}
	}
	return nil
}

func (e *Exec) allocate(p *plan.Plan, in Info) error {
	page := in.PageSize
	if page == 0 {
		page = 16384
	}
	maxBuf := in.MaxBuffer
	if maxBuf == 0 {
		maxBuf = 1 << 30
	}
	lay, err := placeWeights(p, page, maxBuf)
	if err != nil {
		return err
	}
	regions := make([]buffer, len(lay.regions))
	for i, r := range lay.regions {
		if regions[i], err = e.dev.wrap(r.mem); err != nil {
			return fmt.Errorf("metal: plan %s: wrapping %d bytes of weights: %w", p.Name, len(r.mem), err)
		}
		e.owned = append(e.owned, regions[i])
	}
	copies := make([]buffer, len(lay.copies))
	for i, n := range lay.copies {
		if copies[i], err = e.dev.newBuffer(max(n, 4), shared); err != nil {
			return fmt.Errorf("metal: plan %s: %d bytes of copied weights: %w", p.Name, n, err)
		}
		e.owned = append(e.owned, copies[i])
	}
	if e.dummy, err = e.dev.newBuffer(dummySize, shared); err != nil {
		return fmt.Errorf("metal: plan %s: %w", p.Name, err)
	}
	e.owned = append(e.owned, e.dummy)

	var total int64
	e.binds = make([]devBind, len(p.Buffers))
	e.host = make([][]byte, len(p.Buffers))
	e.sizes = make([]uint64, len(p.Buffers))
	e.kinds = make([]plan.BufKind, len(p.Buffers))
	for i, bd := range p.Buffers {
		if bd.Size < 0 {
			return fmt.Errorf("metal: plan %s: buffer %d (%q) has negative size %d", p.Name, i, bd.Name, bd.Size)
		}
		e.sizes[i], e.kinds[i] = uint64(bd.Size), bd.Kind
		switch bd.Kind {
		case plan.BufWeights:
			switch pl := lay.place[i]; {
			case !pl.copied:
				e.binds[i] = devBind{h: regions[pl.index].h, base: uint64(pl.off)}
			case pl.index < 0: // empty tensor
				e.binds[i] = devBind{h: e.dummy.h}
			default:
				c := copies[pl.index]
				bd.CopyWeights(c.mem[pl.off:])
				e.binds[i] = devBind{h: c.h, base: uint64(pl.off)}
			}
		case plan.Scratch, plan.State, plan.IO:
			if bd.Data != nil {
				return fmt.Errorf("metal: plan %s: buffer %q is not a weights buffer but has Data", p.Name, bd.Name)
			}
			if bd.Size > maxBufferBytes || total+bd.Size > maxBufferBytes {
				return fmt.Errorf("metal: plan %s: buffer %q: %d bytes is too large", p.Name, bd.Name, bd.Size)
			}
			total += bd.Size
			mode := shared
			if bd.Kind == plan.Scratch {
				mode = private
			}
			// Metal rejects zero-length buffers; one word stands in.
			buf, err := e.dev.newBuffer(max(bd.Size, 4), mode)
			if err != nil {
				return fmt.Errorf("metal: plan %s: buffer %q (%d bytes): %w", p.Name, bd.Name, bd.Size, err)
			}
			e.owned = append(e.owned, buf)
			e.binds[i] = devBind{h: buf.h}
			if mode == shared {
				e.host[i] = buf.mem[:bd.Size]
			}
		default:
			return fmt.Errorf("metal: plan %s: buffer %q has unknown kind %d", p.Name, bd.Name, bd.Kind)
		}
	}
	return nil
}

// prewarm compiles the pipelines of every dispatch whose launches resolve
// with all step variables zero, so the first token does not pay for
// compilation; dispatches whose launches depend on the variables compile
// on first use.
func (e *Exec) prewarm() error {
	var vars plan.Vars
	var ls []shaders.Launch
	for pi := range e.passes {
		for i := range e.passes[pi].Ops {
			r := e.passes[pi].Ops[i].Resolved(&vars)
			var err error
			if ls, err = e.launch(&r, &e.tuning, ls[:0]); err != nil {
				continue
			}
			for _, l := range ls {
				if _, err := e.pipelineFor(&l); err != nil {
					return fmt.Errorf("metal: plan %s/%s op %d (%s): %w", e.name, e.passes[pi].Name, i, r.Kernel, err)
				}
			}
		}
	}
	return nil
}

// pipeKey identifies a pipeline: a function and its constant values.
type pipeKey struct {
	fn string
	n  int
	c  [maxConstants]shaders.Constant
}

const maxConstants = 8

func (e *Exec) pipelineFor(l *shaders.Launch) (pipeline, error) {
	if len(l.Constants) > maxConstants {
		return pipeline{}, fmt.Errorf("%s: %d function constants, at most %d", l.Function, len(l.Constants), maxConstants)
	}
	k := pipeKey{fn: l.Function, n: len(l.Constants)}
	copy(k.c[:], l.Constants)
	if p, ok := e.pipes[k]; ok {
		return p, nil
	}
	p, err := e.dev.pipeline(l.Function, l.Constants)
	if err != nil {
		return pipeline{}, err
	}
	e.pipes[k] = p
	return p, nil
}

// Write implements plan.Executable for IO and State buffers (shared
// memory); Scratch lives in GPU-private memory and weights are read-only.
func (e *Exec) Write(buf plan.BufID, off int64, src []byte) error {
	return e.copyHost(buf, off, src, true)
}

// Read implements plan.Executable for IO and State buffers.
func (e *Exec) Read(buf plan.BufID, off int64, dst []byte) error {
	return e.copyHost(buf, off, dst, false)
}

// copyHost copies p into (write) or out of a host-visible buffer.
func (e *Exec) copyHost(buf plan.BufID, off int64, p []byte, write bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	what := "read"
	if write {
		what = "write"
	}
	mem, err := e.hostRange(buf, off, len(p), what)
	if err != nil {
		return err
	}
	if write {
		copy(mem, p)
	} else {
		copy(p, mem)
	}
	return nil
}

func (e *Exec) hostRange(buf plan.BufID, off int64, n int, what string) ([]byte, error) {
	if e.closed {
		return nil, fmt.Errorf("metal: plan %s: executable is closed", e.name)
	}
	if int(buf) >= len(e.host) {
		return nil, fmt.Errorf("metal: plan %s: %s of unknown buffer %d", e.name, what, buf)
	}
	name := e.plan.Buffers[buf].Name
	mem := e.host[buf]
	if mem == nil {
		switch e.kinds[buf] {
		case plan.BufWeights:
			return nil, fmt.Errorf("metal: plan %s: buffer %q holds weights and is read-only", e.name, name)
		default:
			return nil, fmt.Errorf("metal: plan %s: buffer %q is scratch in GPU-private memory; only IO and State buffers can be read or written", e.name, name)
		}
	}
	if off < 0 || off > int64(len(mem)) || int64(n) > int64(len(mem))-off {
		return nil, fmt.Errorf("metal: plan %s: %s of %d bytes at %d is outside buffer %q (%d bytes)", e.name, what, n, off, name, len(mem))
	}
	return mem[off : off+int64(n)], nil
}

// Stats returns the counters since load or the last ResetStats.
func (e *Exec) Stats() backends.MetalStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// ResetStats zeroes the counters.
func (e *Exec) ResetStats() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats = backends.MetalStats{}
}

// Close implements plan.Executable. No command buffer is in flight between
// calls, so the buffers can go at once.
func (e *Exec) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.release()
	return nil
}

func (e *Exec) release() {
	for _, b := range e.owned {
		e.dev.release(b)
	}
	if e.arena.h != 0 {
		e.dev.release(e.arena)
	}
	e.owned, e.arena, e.host, e.plan = nil, buffer{}, nil, nil
}

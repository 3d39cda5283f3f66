package cuda

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unsafe"

	"github.com/harkapp/hark/engine/backends"
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
	// rng draws PermuteSeed's block permutations; executables prepare
	// their batches concurrently (outside dev.mu), so it has its own lock.
	rngMu sync.Mutex
	rng   *rand.Rand
	// stats and profile of closed executables; open ones report their own
	stats backends.CUDAStats
	prof  map[string]*backends.KernelTime
	execs map[*Exec]struct{}
}

// weightKey names a weights buffer's host bytes, so plans of one file
// share its uploads: the first byte and the length, and for stacked parts
// (plan.Buffer.Parts) where each part lies.
type weightKey struct {
	p      uintptr
	n      int64
	parts  string
	layout shaders.Layout // plans share an upload only in one layout
}

func keyOf(bd *plan.Buffer) weightKey {
	if bd.Parts == nil {
		return weightKey{p: uintptr(unsafe.Pointer(unsafe.SliceData(bd.Data))), n: bd.Size}
	}
	var s strings.Builder
	for _, part := range bd.Parts {
		fmt.Fprintf(&s, "%x+%d,", uintptr(unsafe.Pointer(unsafe.SliceData(part))), len(part))
	}
	return weightKey{n: bd.Size, parts: s.String()}
}

type devWeights struct {
	ptr  dptr
	refs int
}

// New opens GPU o.Device. It returns an error wrapping ErrUnavailable when
// there is no driver or GPU.
func New(o Options) (*Backend, error) {
	o = envOptions(o)
	if _, err := shaders.Override(Tuning(), o.Tune); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	dev, err := openDevice(o.Device, o)
	if err != nil {
		return nil, err
	}
	tuning, err := shaders.Override(tuningFor(dev), o.Tune)
	if err != nil {
		dev.close()
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if tuning.Cores == 0 { // (HARK_CUDA_TUNE may set it, to measure)
		tuning.Cores = uint32(max(dev.info.SMs, 0))
	}
	seed := o.PermuteSeed
	return &Backend{dev: dev, opt: o, tuning: tuning, weights: map[weightKey]*devWeights{},
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Name implements plan.Backend.
func (b *Backend) Name() string { return "cuda" }

// Info describes the GPU.
func (b *Backend) Info() Info { return b.dev.info }

// Tuning is the kernel tuning Load uses on this GPU (MatMulMMA set only
// when the native sm_80 module is loaded).
func (b *Backend) Tuning() shaders.Tuning { return b.tuning }

// Close releases the GPU. Executables loaded from b must be closed first.
func (b *Backend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		_ = b.dev.do(func() error { // closing: the frees' errors have no one to go to
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
	bufs    [16]uint64
	args    [shaders.ArgsSize / 4]uint32
	perm    [2]uint32
	step    dptr // replay: the step's variables (plan.Vars) in the step buffer
	halt    dptr // a chain's halt word (plan.ChainHalt), 0 outside one
	npatch  uint32
	running int32 // the halt word's value while the chain runs
	patch   [plan.MaxPatch]devPatch
}

// devPatch is __hark::Patch: field target = base + mul*step[vr].
type devPatch struct {
	base, mul  int64
	target, vr uint32
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
	layouts []shaders.Layout // each buffer's upload layout (shaders.Layouts; nil: the file's)
	dummy   dptr
	tickets dptr // shaders.TicketWords zeroed words; each ticket launch leaves its words zero
	passes  []plan.Pass
	tuning  shaders.Tuning
	// splitDeep is tuning with attention_paged's split over a row's keys
	// on, for the steps whose deepest row reads more than one split chunk
	// of keys (splitsDeep); nil where tuning splits already or
	// Options.NoDeepSplit.
	splitDeep *shaders.Tuning
	arena     dptr
	arenaN    uint64
	staging   unsafe.Pointer // page-locked host memory for Read/Write
	stageN    uint64
	// stageOff is the staging bytes the copies queued since the last wait
	// still use (queueCopy, stage): a Write queues its copy and returns (the
	// stream runs it before anything queued after it), so a step's writes
	// cost no wait of their own; the next wait frees their bytes.
	stageOff uint64
	// grown counts the scratch arena's and the staging buffer's growths,
	// and the waits a write's staging took (TraceCounts)
	arenaGrown, stageGrown, stageWaits int
	closed                             bool
	// per-dispatch state, kept here so running allocates little
	acc      []plan.Access
	launches []shaders.Launch
	argb     [shaders.ArgsSize]byte
	opPrm    params // the parameter of the dispatch being issued (buildParams)
	prm      params // the launch's: opPrm with its scratch, permutation and patches
	prmPtr   unsafe.Pointer
	// programmatic dependent launch (pdl.go): pdl when the backend
	// overlaps launches at all; afterKernel while the stream's last work
	// queued is a kernel of this batch; the launch's config and attribute
	pdl         bool
	afterKernel bool
	pdlCfg      launchConfig
	pdlAttr     launchAttr
	batch       batch
	table       []passTable // the launch table (table.go)
	// stored: the function constants' values as the batch being issued
	// has stored them so far (issue, storeConstants)
	stored []constSet
	// also are the staging bytes of a batch's further read-backs
	// (plan.ChainIO.Also) until its wait
	also [][]byte
	// paramsBuilt counts dispatch parameters built (tests: a replay
	// builds none)
	paramsBuilt int
	// replay (graph.go): the step buffer on the GPU and its page-locked
	// source, stepRows rows of plan.Vars each, and the recorded graphs
	stepDev  dptr
	stepHost unsafe.Pointer
	graphs   graphs
	stats    backends.CUDAStats
	prof     profiler
}

// Load implements plan.Backend: weights are copied to the GPU once (shared
// between plans that bind the same tensor memory), Scratch, State and IO
// buffers are allocated and zeroed, and every function the plan can reach
// is looked up.
func (b *Backend) Load(p *plan.Plan) (plan.Executable, error) { return b.LoadTuned(p, b.tuning) }

// LoadTuned is Load with other kernel tuning (the kernel tests run every
// tuning the executor runs).
func (b *Backend) LoadTuned(p *plan.Plan, t shaders.Tuning) (plan.Executable, error) {
	if err := plan.CheckLoad(p); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	t = t.ForPlan(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("cuda: backend is closed")
	}
	e := &Exec{b: b, name: p.Name, plan: p, tuning: t}
	if t.AttnPagedChunk == shaders.PagedSplitOff && !b.opt.NoDeepSplit {
		deep := t
		deep.AttnPagedChunk = uint32(cmp.Or(b.opt.DeepSplitKeys, int(shaders.Default.AttnPagedChunk)))
		e.splitDeep = &deep
	}
	e.prmPtr = unsafe.Pointer(&e.prm)
	e.pdl = b.pdlOn()
	err := b.dev.do(func() error { return e.load(p) })
	if err != nil {
		_ = b.dev.do(func() error { e.release(); return nil }) // load's error is the one reported
		return nil, err
	}
	if b.execs == nil {
		b.execs = map[*Exec]struct{}{}
	}
	b.execs[e] = struct{}{}
	if b.opt.NoChain {
		return unchained{e}, nil
	}
	return e, nil
}

// Stats sums the work of every executable of the backend since
// ResetStats, closed ones included.
func (b *Backend) Stats() backends.CUDAStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	s := b.stats
	for e := range b.execs {
		s.Add(e.stats)
	}
	return s
}

// ResetStats zeroes the counts Stats reports.
func (b *Backend) ResetStats() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	b.stats, b.prof = backends.CUDAStats{}, nil
	for e := range b.execs {
		e.stats, e.prof.acc = backends.CUDAStats{}, nil
	}
}

// Stats reports the executable's work since load.
func (e *Exec) Stats() backends.CUDAStats {
	e.b.dev.mu.Lock()
	defer e.b.dev.mu.Unlock()
	return e.stats
}

// TraceCounts is the executable's running counts for a step trace
// (llm.Batch.TraceCounts): graphs recorded, kernel and graph launches,
// waits, scratch and staging growths, waits for staging room.
func (e *Exec) TraceCounts() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.b.dev.mu.Lock()
	st := e.stats
	e.b.dev.mu.Unlock()
	return fmt.Sprintf("graphs=%d kernels=%d replays=%d syncs=%d arena=%d/%d staging=%d/%d/%d splits=%d", st.GraphsBuilt, st.KernelLaunches,
		st.GraphLaunches, st.Syncs, e.arenaGrown, e.arenaN, e.stageGrown, e.stageN, e.stageWaits, st.DeepSplits)
}

// upload copies a weights buffer's Size bytes to dst: Data, or each of
// its stacked parts to its place (no host copy of the stack); in a
// repacked layout, the buffer's bytes repacked on the host.
func (e *Exec) upload(dst dptr, bd *plan.Buffer, l shaders.Layout) error {
	d := e.b.dev.d
	if l.Repacked() {
		rp, err := l.Repack(bd.WeightBytes())
		if err != nil {
			return err
		}
		return d.err("cuMemcpyHtoD", d.cuMemcpyHtoD(dst, unsafe.Pointer(unsafe.SliceData(rp)), uint64(len(rp))))
	}
	parts := bd.Parts
	if parts == nil {
		parts = [][]byte{bd.Data}
	}
	off := int64(0)
	for _, part := range parts {
		n := min(int64(len(part)), bd.Size-off)
		if n <= 0 {
			break
		}
		if err := d.err("cuMemcpyHtoD", d.cuMemcpyHtoD(dst+dptr(off), unsafe.Pointer(unsafe.SliceData(part)), uint64(n))); err != nil {
			return err
		}
		off += n
	}
	return nil
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
	stepBytes := uint64(stepRows * unsafe.Sizeof(plan.Vars{}))
	if e.stepDev, err = alloc(int64(stepBytes), "step buffer"); err != nil {
		return err
	}
	if err := d.err("cuMemAllocHost", d.cuMemAllocHost(&e.stepHost, stepBytes)); err != nil {
		return fmt.Errorf("cuda: plan %s: page-locked step buffer: %w", p.Name, err)
	}
	if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.dummy, 0, dummySize, e.b.dev.stream)); err != nil {
		return err
	}
	if e.tickets, err = alloc(4*shaders.TicketWords, "ticket words"); err != nil {
		return err
	}
	if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.tickets, 0, 4*shaders.TicketWords, e.b.dev.stream)); err != nil {
		return err
	}
	e.sizes = make([]uint64, len(p.Buffers))
	e.ptrs = make([]dptr, len(p.Buffers))
	e.kinds = make([]plan.BufKind, len(p.Buffers))
	e.layouts = shaders.Layouts(p, &e.tuning)
	var total int64
	for i, bd := range p.Buffers {
		if bd.Size < 0 {
			return fmt.Errorf("cuda: plan %s: buffer %q has negative size %d", p.Name, bd.Name, bd.Size)
		}
		e.sizes[i], e.kinds[i] = uint64(bd.Size), bd.Kind
		switch bd.Kind {
		case plan.BufWeights:
			if bd.Size == 0 {
				e.ptrs[i] = e.dummy
				continue
			}
			k := keyOf(&p.Buffers[i])
			if e.layouts != nil {
				k.layout = e.layouts[i]
			}
			w := e.b.weights[k]
			if w == nil {
				w = &devWeights{}
				size := bd.Size
				if k.layout.Repacked() {
					size = k.layout.RepackedSize(size)
				}
				if err := d.err("cuMemAlloc", d.cuMemAlloc(&w.ptr, uint64(size))); err != nil {
					return fmt.Errorf("cuda: plan %s: weights %q (%d bytes): %w", p.Name, bd.Name, size, err)
				}
				if err := e.upload(w.ptr, &p.Buffers[i], k.layout); err != nil {
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
	if err := e.buildTable(); err != nil {
		return err
	}
	return e.sync("load")
}

func (e *Exec) sync(what string) error {
	d := e.b.dev.d
	e.stats.Syncs++
	err := d.err("cuStreamSynchronize", d.cuStreamSynchronize(e.b.dev.stream))
	e.stageOff = 0 // every queued copy has run (or the stream failed)
	if err != nil {
		return fmt.Errorf("cuda: plan %s: %s: %w", e.name, what, err)
	}
	return nil
}

// Run implements plan.Executable: the pass's launches are queued on the
// stream and waited for.
func (e *Exec) Run(pass int, vars *plan.Vars) error {
	if vars == nil {
		vars = &plan.Vars{}
	}
	return e.RunSeq(pass, unsafe.Slice(vars, 1))
}

// RunSeq implements plan.Executable: every step is queued before one wait
// (in batches of up to stepRows steps, each a graph replay once its shape
// repeats).
func (e *Exec) RunSeq(pass int, steps []plan.Vars) error {
	_, err := e.runSteps(pass, nil, steps, stepRows, nil, nil)
	return err
}

// runSteps runs step i as pass passes[i] (every step as pass when passes
// is nil: RunSeq) with vars[i], chunk steps per batch, and calls done
// after each batch with the steps completed (e.mu is released meanwhile,
// so done may Read); done false stops. Each batch is prepared whole
// before anything is issued: one that fails to prepare issues nothing,
// and earlier ones completed and count. With io set, the first batch
// writes io's Src before its work and every batch reads io's Dst behind
// its work, inside its one wait (done sees the bytes).
func (e *Exec) runSteps(pass int, passes []int, vars []plan.Vars, chunk int, io *plan.ChainIO, done func(completed int) bool) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	what := "chained steps"
	if passes == nil {
		if err := plan.CheckPass(e.name, e.closed, pass, len(e.passes)); err != nil {
			return 0, fmt.Errorf("cuda: %w", err)
		}
		what = "pass " + e.passes[pass].Name
	}
	lead := 0 // io.Lead: issued first, kernel by kernel, with no wait of its own
	if io != nil && io.Lead < len(vars) && !e.b.opt.Profile {
		lead = max(io.Lead, 0)
	}
	completed := 0
	for lo, hi := 0, 0; lo < len(vars); lo = hi {
		if e.closed {
			return completed, fmt.Errorf("cuda: plan %s: executable is closed", e.name)
		}
		hi = min(lo+chunk, len(vars))
		if lo < lead {
			hi = lead
		}
		keyed := e.useGraphs() && lo >= lead
		err := e.runBatch(func(b *batch) error {
			e.setHalt(b, io, lo, keyed)
			for i := lo; i < hi; i++ {
				p := pass
				if passes != nil {
					if p = passes[i]; p < 0 || p >= len(e.passes) {
						return fmt.Errorf("cuda: plan %s: step %d: pass %d out of range (%d passes)", e.name, i, p, len(e.passes))
					}
				}
				if err := e.prepare(b, p, &vars[i], keyed); err != nil {
					if passes != nil || len(vars) > 1 {
						err = fmt.Errorf("step %d: %w", i, err)
					}
					return err
				}
			}
			return nil
		}, io, lo == 0, lo < lead, what)
		if err != nil {
			return completed, err
		}
		if lo < lead {
			continue // its steps complete with the next batch
		}
		completed = hi
		if done != nil {
			e.mu.Unlock()
			more := done(completed)
			e.mu.Lock()
			if !more {
				break
			}
		}
	}
	return completed, nil
}

// runBatch prepares a batch with fill, issues it and waits for it (e.mu
// held); with io set, io's Src is written before the batch's work when
// first is set, and io's Dst read behind it, before the one wait. A lead
// batch (io.Lead's steps) is launched kernel by kernel and neither read
// nor waited for: the next batch's wait covers it. Nothing is issued
// when fill fails.
func (e *Exec) runBatch(fill func(*batch) error, io *plan.ChainIO, first, lead bool, what string) error {
	b := &e.batch
	b.reset()
	if err := fill(b); err != nil {
		return err
	}
	dev := e.b.dev
	dev.mu.Lock()
	defer dev.mu.Unlock()
	return dev.do(func() error {
		if io != nil && first {
			if _, err := e.queueCopy(io.In, io.InOff, io.Src, true); err != nil {
				return err
			}
		}
		run := e.run
		if lead {
			run = e.runLead
		}
		if err := run(b); err != nil {
			_ = e.sync("after a failed launch") // the launch's error is the one reported
			e.prof.n, e.prof.names = 0, e.prof.names[:0]
			return err
		}
		if lead {
			return nil
		}
		var out []byte
		e.also = e.also[:0]
		if io != nil {
			var err error
			if out, err = e.queueCopy(io.Out, io.OutOff, io.Dst, false); err != nil {
				_ = e.sync("after a failed read")
				return err
			}
			for _, r := range io.Also {
				a, err := e.queueCopy(r.Buf, r.Off, r.Dst, false)
				if err != nil {
					_ = e.sync("after a failed read")
					return err
				}
				e.also = append(e.also, a)
			}
		}
		if err := e.sync(what); err != nil {
			return err
		}
		if io != nil {
			copy(io.Dst, out)
			for i, r := range io.Also {
				copy(r.Dst, e.also[i])
			}
		}
		if e.b.opt.Profile {
			return e.collect()
		}
		return nil
	})
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
		e.dropGraphs() // they bake in the old arena
		d.cuMemFree(e.arena)
		e.arena, e.arenaN = 0, 0
	}
	if err := d.err("cuMemAlloc", d.cuMemAlloc(&e.arena, size)); err != nil {
		return fmt.Errorf("per-dispatch scratch of %d bytes: %w", size, err)
	}
	e.arenaN = size
	e.arenaGrown++
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
	if err := e.hostSpan(buf, off, len(mem), what); err != nil {
		return err
	}
	if len(mem) == 0 {
		return nil
	}
	dev := e.b.dev
	dev.mu.Lock()
	defer dev.mu.Unlock()
	return dev.do(func() error {
		stage, err := e.queueCopy(buf, off, mem, write)
		if err != nil || write {
			return err // a write waits for nothing: the next wait (a Run's, a Read's) covers it
		}
		if err := e.sync("reading " + e.plan.Buffers[buf].Name); err != nil {
			return err
		}
		copy(mem, stage)
		return nil
	})
}

// hostSpan checks that n bytes of buf from off may move to or from the
// host: an IO or State buffer, inside it (e.mu held).
func (e *Exec) hostSpan(buf plan.BufID, off int64, n int, what string) error {
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
	if off < 0 || off > size || int64(n) > size-off {
		return fmt.Errorf("cuda: plan %s: %s of %d bytes at %d is outside buffer %q (%d bytes)", e.name, what, n, off, name, size)
	}
	return nil
}

// queueCopy queues a copy between mem and buf from byte off through the
// page-locked staging buffer on the stream, behind the work already queued
// (the device held, its context current), and returns the staging bytes it
// uses: a write copies mem there now, a read's bytes are there after the
// next wait. Each copy takes its own staging bytes after those of the
// copies queued since the last wait (stage), so a write that waits for
// nothing keeps its source until it has run.
func (e *Exec) queueCopy(buf plan.BufID, off int64, mem []byte, write bool) ([]byte, error) {
	if len(mem) == 0 {
		return nil, nil
	}
	n := uint64(len(mem))
	host, err := e.stage(n)
	if err != nil {
		return nil, err
	}
	d, stream := e.b.dev.d, e.b.dev.stream
	at := e.ptrs[buf] + uint64(off)
	stage := unsafe.Slice((*byte)(host), len(mem))
	if write {
		copy(stage, mem)
		if err := d.err("cuMemcpyHtoDAsync", d.cuMemcpyHtoDAsync(at, host, n, stream)); err != nil {
			return nil, fmt.Errorf("cuda: plan %s: writing %q: %w", e.name, e.plan.Buffers[buf].Name, err)
		}
		return stage, nil
	}
	if err := d.err("cuMemcpyDtoHAsync", d.cuMemcpyDtoHAsync(host, at, n, stream)); err != nil {
		return nil, fmt.Errorf("cuda: plan %s: reading %q: %w", e.name, e.plan.Buffers[buf].Name, err)
	}
	return stage, nil
}

// stage reserves n bytes of the staging buffer after those of the copies
// queued since the last wait; when they would not fit, it waits for those
// copies (their bytes are then free) and grows the buffer to hold them
// and n together (at least doubled), so the same writes between two waits
// fit from then on: a sequence joining a batch writes its sampler's counts
// (2 x vocabulary words) beside its settings and the step's tables, and
// each wait stalled that step's host. 256-byte steps keep every copy's
// host address aligned.
func (e *Exec) stage(n uint64) (unsafe.Pointer, error) {
	if e.stageOff+n > e.stageN {
		want := n
		if e.stageOff > 0 {
			want = max(e.stageOff+n, 2*e.stageN)
			e.stageWaits++
			if err := e.sync("staging"); err != nil { // resets stageOff
				return nil, err
			}
		}
		if err := e.ensureStaging(want); err != nil {
			return nil, err
		}
	}
	host := unsafe.Add(e.staging, e.stageOff)
	e.stageOff += (n + 255) &^ 255
	return host, nil
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
	e.stageGrown++
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
	e.dropGraphs()
	e.b.stats.Add(e.stats)
	e.stats = backends.CUDAStats{}
	if e.prof.acc != nil {
		if e.b.prof == nil {
			e.b.prof = map[string]*backends.KernelTime{}
		}
		addProfile(e.b.prof, e.prof.acc)
	}
	e.prof.release(d)
	delete(e.b.execs, e)
	if e.stepHost != nil {
		d.cuMemFreeHost(e.stepHost)
	}
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
	e.owned, e.weights, e.arena, e.staging, e.stepHost, e.plan = nil, nil, 0, nil, nil, nil
}

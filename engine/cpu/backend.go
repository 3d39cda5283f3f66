package cpu

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Options configures a CPU backend.
type Options struct {
	// Threads is the number of workers (0 = DefaultThreads). Ignored when Pool
	// is set.
	Threads int
	// Pool lets several backends share one set of workers.
	Pool *Pool
	// FloatActivations makes products with quantized weights multiply the
	// dequantized weights by the float activations, as the GPU kernels
	// do, instead of quantizing the activations to 8 bits per element
	// first (ggml's way and the default: integer dot products, faster).
	// It covers every product with quantized weights: the row products
	// (decode, beams, and everything without a BLAS) and the quantized
	// GEMM (m >= 16 on VNNI) alike. It is the reference for GPU-vs-CPU
	// comparisons, where the activations' quantization error would
	// otherwise be charged to the GPU.
	FloatActivations bool
	// QuantGEMM makes every product of weights the quantized GEMM takes
	// (q8_0, q4_0, q5_0, iq4_nl) with m >= 16 rows and k a multiple of 32
	// take it, 8-bit activations, whatever the CPU's SIMD and BLAS (the
	// portable kernel where the CPU's has too few code bits): the
	// reference of the GPU's int8 tensor-core products (issue #35), which
	// quantize the activations the same way. FloatActivations wins.
	QuantGEMM bool
	// ChunkRows, where above 0, runs a prefill step's layer blocks in
	// chunks of this many rows (rounded up to a multiple of 64), so their
	// activation buffers need a chunk's rows, not the step's: bit for bit
	// the same results, less memory (SmolLM2's pp512: 2.3 MB of scratch
	// instead of 8.7), more CPU where several workers wait at each
	// chunk's barriers (chunk.go). 0: whole steps.
	ChunkRows int
}

// Backend executes plans on the CPU. It implements plan.Backend.
type Backend struct {
	pool      *Pool
	ownPool   bool
	floatActs bool
	quantGEMM bool
	pri       *atomic.Int32 // the passes' priority on the pool (nil: DefaultPriority)
	chunkRows int64         // Options.ChunkRows, a multiple of causalBlock
}

// New returns a CPU backend. Its worker pool lives until Close.
func New(opts Options) *Backend {
	chunk := int64(0)
	if opts.ChunkRows > 0 {
		chunk = (int64(opts.ChunkRows) + causalBlock - 1) / causalBlock * causalBlock
	}
	if opts.Pool != nil {
		return &Backend{pool: opts.Pool, floatActs: opts.FloatActivations, quantGEMM: opts.QuantGEMM, chunkRows: chunk}
	}
	return &Backend{pool: NewPool(opts.Threads), ownPool: true, floatActs: opts.FloatActivations, quantGEMM: opts.QuantGEMM, chunkRows: chunk}
}

// Name implements plan.Backend.
func (b *Backend) Name() string { return "cpu" }

// Pool is the backend's worker pool.
func (b *Backend) Pool() *Pool { return b.pool }

// Close stops the worker pool if the backend created it. Executables loaded
// from b must not run afterwards.
func (b *Backend) Close() {
	if b.ownPool {
		b.pool.Close()
		b.ownPool = false
	}
}

// maxBufferBytes bounds a single non-weight buffer so that a corrupt plan
// cannot ask for an absurd allocation (64 GiB is beyond any model we run).
const maxBufferBytes = 64 << 30

// Load validates p, allocates its Scratch, State and IO buffers (zeroed,
// 64-byte aligned), wraps its weights without copying, and checks each
// dispatch's static properties (types, parameter ranges that no patch can
// change). Everything a step needs is allocated here, so Run does not
// allocate.
func (b *Backend) Load(p *plan.Plan) (plan.Executable, error) {
	if err := plan.CheckLoad(p); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	e := &Exec{pool: b.pool, pri: b.pri, name: p.Name, mm: NewMatMul(b.pool), keysWritten: -1, chunkRows: b.chunkRows}
	e.StepRunner = plan.NewStepRunner(&e.mu, e.ready, e.runPass)
	e.mm.floatActs = b.floatActs
	if b.quantGEMM {
		e.mm.qgemm, e.mm.quantRef = qgemmOn, true
	}
	if err := checkSizes(p); err != nil {
		return nil, err
	}
	ops := make([][]plan.Dispatch, len(p.Passes))
	for i, ps := range p.Passes {
		ops[i] = ps.Ops
	}
	offs, span, touched, runs, drops := scratchLayout(p.Buffers, ops, e.rowExact, b.chunkRows)
	for i, ps := range p.Passes {
		if ps.Recurring {
			drops[i] = nil // its pages stay (arena_release.go)
		}
	}
	e.arena, e.arenaTouched, e.drops, e.pending = newSpare(span), touched, drops, -1 // untouched pages cost nothing
	arena := e.arena.b
	places := make([]arenaPlace, len(p.Buffers))
	for i, bd := range p.Buffers {
		var mem []byte
		switch bd.Kind {
		case plan.BufWeights:
			mem = bd.WeightBytes() // CheckLoad checked its length; stacked parts are joined here
			// Typed views need 4-byte alignment; mapped GGUF data always has
			// it, but a plan built from arbitrary slices may not.
			if len(mem) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(mem)))&3 != 0 {
				c := alignedBytes(bd.Size)
				copy(c, mem)
				mem = c
			}
		case plan.Scratch, plan.State, plan.IO:
			if offs[i] < 0 {
				mem = alignedBytes(bd.Size)
				break
			}
			mem = arena[offs[i] : offs[i]+bd.Size : offs[i]+bd.Size]
			places[i] = arenaPlace{in: true, off: uint64(offs[i]), size: uint64(bd.Size)}
		default:
			return nil, fmt.Errorf("cpu: plan %s: buffer %q has unknown kind %d", p.Name, bd.Name, bd.Kind)
		}
		e.bufs = append(e.bufs, newBuffer(bd.Name, bd.Kind, mem))
	}
	for pi, ps := range p.Passes {
		cp := compiledPass{name: ps.Name, ops: append([]plan.Dispatch(nil), ps.Ops...), runs: runs[pi]}
		for i := range cp.ops {
			if err := e.check(&cp.ops[i]); err != nil {
				return nil, fmt.Errorf("cpu: plan %s/%s op %d (%s): %w", p.Name, ps.Name, i, cp.ops[i].Kernel, err)
			}
		}
		cp.fence = fences(cp.ops, places)
		e.passes = append(e.passes, cp)
	}
	e.packProducts()
	e.allocScratch()
	return e, nil
}

// checkSizes rejects, before anything is allocated, a Scratch, State or
// IO buffer with Data, and such buffers of more than maxBufferBytes in
// all, so that a corrupt plan cannot ask for an absurd allocation.
func checkSizes(p *plan.Plan) error {
	var total int64
	for _, bd := range p.Buffers {
		switch bd.Kind {
		case plan.Scratch, plan.State, plan.IO:
			if bd.Data != nil {
				return fmt.Errorf("cpu: plan %s: buffer %q is not a weights buffer but has Data", p.Name, bd.Name)
			}
			if bd.Size > maxBufferBytes || total+bd.Size > maxBufferBytes {
				return fmt.Errorf("cpu: plan %s: buffer %q: %d bytes is too large", p.Name, bd.Name, bd.Size)
			}
			total += bd.Size
		}
	}
	return nil
}

// alignedBytes returns n zeroed bytes starting on a 64-byte boundary (a
// cache line, and the widest SIMD load).
func alignedBytes(n int64) []byte {
	raw := make([]byte, n+63)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))) & 63
	return raw[off : off+int(n) : off+int(n)]
}

// buffer is one allocated plan buffer with typed views made once at load.
type buffer struct {
	name string
	kind plan.BufKind
	b    []byte
	f    []float32 // b as float32 (len(b)/4 elements)
	i    []int32
	h    []uint16
}

func newBuffer(name string, kind plan.BufKind, b []byte) buffer {
	bf := buffer{name: name, kind: kind, b: b}
	if len(b) >= 4 {
		p := unsafe.Pointer(unsafe.SliceData(b))
		bf.f = unsafe.Slice((*float32)(p), len(b)/4)
		bf.i = unsafe.Slice((*int32)(p), len(b)/4)
	}
	if len(b) >= 2 {
		bf.h = unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
	}
	return bf
}

// check validates what a dispatch fixes at load: the element type its
// kernel supports and the parameters that no patch can rewrite (the
// contract's patch targets; Validate rejects others). Parameters that
// patches can change are checked again at every step.
func (e *Exec) check(d *plan.Dispatch) error {
	// patch targets and variables were checked by Validate
	for j, bd := range d.Bind[:d.NBind] {
		if bd.Buf == plan.NoBuf {
			continue
		}
		if d.Kernel.Writes(j) && e.bufs[bd.Buf].kind == plan.BufWeights {
			return fmt.Errorf("binding %d writes to weights buffer %q", j, e.bufs[bd.Buf].name)
		}
	}
	// required bindings must be present (Validate only counts them)
	info, _ := d.Kernel.Info()
	for j := 0; j < info.MinBind; j++ {
		if d.Bind[j].Buf == plan.NoBuf && !d.Kernel.Optional(j) {
			return fmt.Errorf("required binding %d is empty", j)
		}
	}
	switch d.Kernel {
	case plan.Embed:
		if !canDequantRow(d.Type) {
			return fmt.Errorf("embedding table type %s is not supported", d.Type)
		}
	case plan.MatVec, plan.MatMul, plan.RMSNormMatVec, plan.LayerNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.Conv1D,
		plan.RopeAttentionMatVec:
		if !d.Type.Supported() || d.Type == ggml.I32 || d.Type == ggml.Q8_K || d.Type == ggml.Q8_1 {
			return fmt.Errorf("weight type %s is not supported", d.Type)
		}
	case plan.Attention, plan.RopeKV, plan.AttentionPaged, plan.RopeKVPaged, plan.RopeAttention:
		if d.Type != ggml.F32 && d.Type != ggml.F16 {
			return fmt.Errorf("KV type %s is not supported (f32 or f16)", d.Type)
		}
	case plan.Copy:
		if d.Type != ggml.F32 && d.Type != ggml.F16 && d.Type != ggml.BF16 {
			return fmt.Errorf("destination type %s is not supported (f32, f16 or bf16)", d.Type)
		}
	case plan.BeamCopy:
		if d.Type != ggml.F32 && d.Type != ggml.F16 && d.Type != ggml.BF16 {
			return fmt.Errorf("cache type %s is not supported (f32, f16 or bf16)", d.Type)
		}
	}
	// The contract's checks see final values only when no patch rewrites
	// a parameter; otherwise each kernel applies them at every step.
	for _, pt := range d.Patch[:d.NPatch] {
		if pt.Target.IsParam() {
			return nil
		}
	}
	return d.Check()
}

// rowExact reports whether a product's rows come out the same in a chunk
// of rows as in the whole step: it takes the quantized GEMM there (integer
// dot products, each row its own), not sgemm (chunk.go).
func (e *Exec) rowExact(d *plan.Dispatch) bool {
	if d.Kernel != plan.MatMul {
		return true
	}
	kd := kinds[d.Type]
	if kd == nil {
		return false
	}
	a := mulArgs{kd: kd, m: chunkMin, k: plan.DecodeProduct(d).K}
	return e.mm.canQGemm(&a)
}

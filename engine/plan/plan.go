// Package plan is the seam between model code and backends. Model code
// describes a forward pass once, as a flat list of fixed-size dispatch
// records; a backend replays that list for every token or audio window,
// patching a few per-step fields (position, KV length, token slot). Nothing
// is allocated per step.
package plan

import (
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggml"
)

// Fixed sizes of a dispatch record. A GPU backend copies P verbatim into the
// kernel's constant block, so its layout is part of each kernel's contract.
const (
	MaxBind   = 8
	MaxParams = 16
	MaxPatch  = 4
)

// BufID names a buffer declared in the plan's buffer table.
type BufID uint32

// Binding is one buffer argument of a dispatch: a buffer and a byte offset.
// An unused optional slot has Buf == NoBuf.
type Binding struct {
	Buf BufID
	Off uint64
}

// NoBuf marks an empty optional binding slot.
const NoBuf BufID = math.MaxUint32

// Var is a per-step value supplied when a plan is run.
type Var uint8

const (
	VarPos   Var = iota // position of the first token of this step
	VarNTok             // tokens processed in this step (prefill chunk length)
	VarKVLen            // KV length visible after this step (VarPos + VarNTok)
	VarSlot             // token slot in a chained decode (index into the token buffer)
	VarStep             // step counter (sampler RNG stream)
	VarUser0            // free for model-specific use
	VarUser1
	NumVars
)

// Vars holds the values of all step variables for one replay.
type Vars [NumVars]int64

// PatchTarget selects the field a patch rewrites: a parameter word or a
// binding's byte offset.
type PatchTarget uint8

const (
	PatchParam0  PatchTarget = 0  // PatchParam0+i rewrites P[i]
	PatchOffset0 PatchTarget = 32 // PatchOffset0+i rewrites Bind[i].Off
)

// IsParam reports whether t rewrites a params word (a 32-bit field)
// rather than a binding's byte offset.
func (t PatchTarget) IsParam() bool { return t < PatchOffset0 }

// Patch rewrites one field at replay: field = Base + Mul*vars[Var].
type Patch struct {
	Target PatchTarget
	Var    Var
	Mul    int64
	Base   int64
}

// Dispatch is one kernel launch. It is plain data: comparable, copyable,
// and the same for every backend.
type Dispatch struct {
	Kernel Kernel
	// Type is the element type of the kernel's typed input (the weight of a
	// matrix product, the table of an embedding, the KV cache of attention).
	Type   ggml.Type
	NBind  uint8
	NPatch uint8
	Bind   [MaxBind]Binding
	P      [MaxParams]uint32
	// Grid is the logical work shape (see each kernel's doc); backends map
	// it onto threads, threadgroups or worker-pool chunks.
	Grid  [3]uint32
	Patch [MaxPatch]Patch
}

// F32 stores a float parameter in a params word.
func F32(f float32) uint32 { return math.Float32bits(f) }

// Resolved returns a copy of d with its patches applied for vars. Backends
// call this per dispatch per step; it does not allocate.
func (d *Dispatch) Resolved(vars *Vars) Dispatch {
	r := *d
	for _, p := range d.Patch[:d.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		switch {
		case p.Target < PatchOffset0:
			r.P[p.Target] = uint32(v)
		default:
			r.Bind[p.Target-PatchOffset0].Off = uint64(v)
		}
	}
	return r
}

// BufKind says who owns a buffer's memory and how long it lives.
type BufKind uint8

const (
	// Weights are read-only bytes from the model file (memory-mapped where
	// the backend can use the mapping directly).
	BufWeights BufKind = iota
	// Scratch holds activations; its contents are meaningless between steps.
	Scratch
	// State persists across steps (KV caches, encoder output, token ids).
	State
	// IO is written or read by the host between steps (mel input, logits).
	IO
)

// Buffer declares one buffer of the plan.
type Buffer struct {
	Name string
	Kind BufKind
	Size int64
	// Data is the content of a Weights buffer (typically a slice of the
	// mapped model file). Nil for other kinds.
	Data []byte
	// Parts, set instead of Data, are a Weights buffer's content as
	// slices laid end to end: matrices of the file stacked into one
	// (engine/llm/fuse.go) without a copy in the plan. Backends read them
	// through Buffer's methods (parts.go).
	Parts [][]byte
}

// Pass is one replayable list of dispatches (a decode step, a prefill
// chunk, an encoder window).
type Pass struct {
	Name string
	Ops  []Dispatch
	// Recurring marks a pass that runs again and again with others between
	// its runs (a Whisper encoder window between the decoder's steps): a
	// backend keeps what it alone needs resident across the other passes
	// instead of giving it back when they run, so that each run does not
	// fault its memory in again.
	Recurring bool
}

// Add appends a dispatch.
func (p *Pass) Add(d Dispatch) { p.Ops = append(p.Ops, d) }

// Plan is everything a backend needs for one model and shape: the buffer
// table, shared by all passes (weights, KV cache, scratch), and the passes.
type Plan struct {
	Name    string
	Buffers []Buffer
	Passes  []*Pass
	// FloatActivations keeps every product of the plan on float
	// activations: a GPU backend does not pick its 8-bit-activation
	// kernels (shaders.Tuning.ForPlan). Whisper sets it: its results are
	// held to the float-activation CPU, and on the H200 the int8 encoder
	// products moved the long-form logits by up to 0.6% for 4% of the
	// encoder's time (bench/cuda/20261130-s16).
	FloatActivations bool
}

// AddBuffer declares a buffer and returns its id.
func (p *Plan) AddBuffer(b Buffer) BufID {
	p.Buffers = append(p.Buffers, b)
	return BufID(len(p.Buffers) - 1)
}

// AddPass appends an empty pass and returns it with its index.
func (p *Plan) AddPass(name string) (*Pass, int) {
	ps := &Pass{Name: name}
	p.Passes = append(p.Passes, ps)
	return ps, len(p.Passes) - 1
}

// Validate checks every dispatch against the buffer table and the kernel
// table: binding counts, buffer ids, and that static offsets fit their
// buffers. Backends call it before executing a plan they did not build.
func (p *Plan) Validate() error {
	for _, ps := range p.Passes {
		if err := p.validatePass(ps); err != nil {
			return err
		}
	}
	return nil
}

func (p *Plan) validatePass(ps *Pass) error {
	for i := range ps.Ops {
		d := &ps.Ops[i]
		info, ok := kernelInfo[d.Kernel]
		if !ok {
			return fmt.Errorf("plan %s/%s: op %d: unknown kernel %d", p.Name, ps.Name, i, d.Kernel)
		}
		if int(d.NBind) < info.MinBind || int(d.NBind) > MaxBind {
			return fmt.Errorf("plan %s/%s: op %d (%s): %d bindings, want at least %d", p.Name, ps.Name, i, info.Name, d.NBind, info.MinBind)
		}
		if int(d.NPatch) > MaxPatch {
			return fmt.Errorf("plan %s/%s: op %d (%s): %d patches", p.Name, ps.Name, i, info.Name, d.NPatch)
		}
		for _, pt := range d.Patch[:d.NPatch] {
			if err := d.checkPatch(pt); err != nil {
				return fmt.Errorf("plan %s/%s: op %d (%s): %w", p.Name, ps.Name, i, info.Name, err)
			}
		}
		for j, b := range d.Bind[:d.NBind] {
			if b.Buf == NoBuf {
				continue
			}
			if int(b.Buf) >= len(p.Buffers) {
				return fmt.Errorf("plan %s/%s: op %d (%s): binding %d names buffer %d of %d", p.Name, ps.Name, i, info.Name, j, b.Buf, len(p.Buffers))
			}
			if int64(b.Off) > p.Buffers[b.Buf].Size {
				return fmt.Errorf("plan %s/%s: op %d (%s): binding %d offset %d beyond buffer %q (%d bytes)", p.Name, ps.Name, i, info.Name, j, b.Off, p.Buffers[b.Buf].Name, p.Buffers[b.Buf].Size)
			}
		}
	}
	return nil
}

// checkPatch rejects a patch of a field that is not a patch target of the
// kernel (see Kernel.Patchable) or that reads an unknown variable.
func (d *Dispatch) checkPatch(pt Patch) error {
	if pt.Var >= NumVars {
		return fmt.Errorf("patch reads unknown variable %d", pt.Var)
	}
	if pt.Target >= PatchOffset0 {
		s := int(pt.Target - PatchOffset0)
		if s >= int(d.NBind) || d.Bind[s].Buf == NoBuf {
			return fmt.Errorf("patch rewrites the offset of empty binding %d", s)
		}
	}
	if !d.Kernel.Patchable(pt.Target) {
		return fmt.Errorf("patch target %d is not a patchable field of %s", pt.Target, d.Kernel)
	}
	return nil
}

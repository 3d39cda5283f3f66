package plan

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
)

//go:generate go run ./internal/kgen/cmd/kgen

// Kernel identifies an operation of the kernel set. Every backend
// implements every kernel with exactly the semantics of its contract; the
// CPU backend is the reference the others are tested against.
//
// The contract is declared once, in internal/kgen/decl.go, and generated
// into kernels_gen.go: the kernel ids, one record type per kernel
// (<Kernel>Args, e.g. RMSNormArgs) with named bindings and params that
// encode into a Dispatch (Args.Dispatch) and decode from one
// (Decode<Kernel>), binding slots (Slot<Kernel><Binding>), named patch
// targets (Patch<Kernel><Field>), binding roles and byte spans
// (Dispatch.Accesses) and the validations every backend applies
// (Dispatch.Check). Shaders read the same words by name through
// shaders/kargs.h. Kernels that share a layout declare it as a layout
// family (Family): Decode<Family> reads the shared fields of any member,
// while Decode<Kernel> accepts its own kernel only. Modes are generated
// enums (Activation, RopeMode).
//
// Conventions for all kernels:
//   - Activations are float32, row-major. "ld" fields are row strides in
//     elements, so a kernel can read or write a slice of a wider buffer
//     (e.g. the Q, K and V parts of one fused QKV row).
//   - Binding offsets are in bytes. Optional bindings use NoBuf.
//   - Dispatch.Type is the element type of the kernel's typed input
//     (matrix weights, embedding table, KV cache); other inputs are f32.
//   - Weight matrices are ggml-ordered: n rows of k contiguous elements
//     (ne[0] = k), i.e. out = x·Wᵀ.
type Kernel uint16

// BindRole says what a kernel does to one of its bindings.
type BindRole uint8

const (
	BindIn    BindRole = iota // read only
	BindOut                   // written
	BindInOut                 // read and written
)

// BindInfo describes one binding slot of a kernel.
type BindInfo struct {
	Name     string
	Role     BindRole
	Optional bool   // may be NoBuf
	Elem     string // "f32", "i32" or "Type" (the dispatch's Type)
}

// ParamInfo describes one field of a kernel's params block.
type ParamInfo struct {
	Name  string
	Word  int // first word in Dispatch.P
	Words int
	Float bool
	Patch bool // a patch target
}

// KernelInfo is static knowledge about a kernel.
type KernelInfo struct {
	Name    string
	MinBind int // bindings that must be present (trailing ones are optional)
	Binds   []BindInfo
	Params  []ParamInfo
}

// Info returns the kernel's static description.
func (k Kernel) Info() (KernelInfo, bool) { i, ok := kernelInfo[k]; return i, ok }

func (k Kernel) String() string {
	if i, ok := kernelInfo[k]; ok {
		return i.Name
	}
	return "kernel?"
}

// Writes reports whether kernel k writes binding slot.
func (k Kernel) Writes(slot int) bool {
	i := kernelInfo[k]
	return slot >= 0 && slot < len(i.Binds) && i.Binds[slot].Role != BindIn
}

// Optional reports whether binding slot of kernel k may be NoBuf.
func (k Kernel) Optional(slot int) bool {
	i := kernelInfo[k]
	return slot >= 0 && slot < len(i.Binds) && i.Binds[slot].Optional
}

// Patchable reports whether t is a patch target of kernel k: a declared
// patchable params field, or any binding's offset.
func (k Kernel) Patchable(t PatchTarget) bool {
	i := kernelInfo[k]
	if t >= PatchOffset0 {
		return int(t-PatchOffset0) < len(i.Binds)
	}
	for _, p := range i.Params {
		if p.Patch && int(t) == p.Word {
			return true
		}
	}
	return false
}

// Family is a layout family: a layout several kernels share (their first
// bindings and params words), declared once in the contract. Code that
// treats all members alike decodes the family's record (Decode<Family>)
// instead of borrowing one member's.
type Family uint8

func (f Family) String() string {
	if f > 0 && f < numFamilies {
		return familyNames[f]
	}
	return "family?"
}

// In reports whether kernel k is a member of family f.
func (k Kernel) In(f Family) bool {
	return int(k) < len(familyMask) && f < numFamilies && familyMask[k]&(1<<f) != 0
}

// expect panics unless d is a dispatch of kernel k: decoding another
// kernel's record with k's layout is a bug in the caller, never valid
// input (plans name known kernels; Validate checks).
func (d *Dispatch) expect(k Kernel, decoder string) {
	if d.Kernel != k {
		panic(fmt.Sprintf("plan: %s of a %s dispatch (kernel %d): decode a kernel with its own decoder, or a member of a layout family with the family's", decoder, d.Kernel, d.Kernel))
	}
}

// expectFamily panics unless d's kernel is a member of family f.
func (d *Dispatch) expectFamily(f Family) {
	if !d.Kernel.In(f) {
		panic(fmt.Sprintf("plan: Decode%s of a %s dispatch (kernel %d), which is not a member of the %s layout family", f, d.Kernel, d.Kernel, f))
	}
}

// Kernels lists every kernel of the set, in id order.
func Kernels() []Kernel {
	ks := make([]Kernel, 0, numKernels-1)
	for k := Embed; k < numKernels; k++ {
		ks = append(ks, k)
	}
	return ks
}

// RotDims is the number of rotated dims of each head: RopeDim, 0 meaning
// the whole head.
func (a *RopeArgs) RotDims() int { return rotDims(a.RopeDim, a.HeadDim) }

// RotDims is as RopeArgs.RotDims.
func (a *RopeKVArgs) RotDims() int { return rotDims(a.RopeDim, a.HeadDim) }

// RotDims is as RopeArgs.RotDims.
func (a *RopeKVPagedArgs) RotDims() int { return rotDims(a.RopeDim, a.HeadDim) }

// RotDims is as RopeArgs.RotDims.
func (a *RopeAttentionArgs) RotDims() int { return rotDims(a.RopeDim, a.HeadDim) }

// RotDims is RopeAttentionMatVec's rotated dims (RopeAttention's).
func (a *RopeAttentionMatVecArgs) RotDims() int { return rotDims(a.RopeDim, a.HeadDim) }

// N is RopeAttentionMatVec's output width: the product is square, nHead
// heads of headDim.
func (a *RopeAttentionMatVecArgs) N() int { return mul(a.NHead, a.HeadDim) }

// RopeAttention is the RopeAttention dispatch record a RopeAttentionMatVec
// begins with: its params and first five bindings, the caches f16.
func (a *RopeAttentionMatVecArgs) RopeAttention() RopeAttentionArgs {
	return RopeAttentionArgs{Type: ggml.F16, Q: a.Q, K: a.K, V: a.V, Out: a.Att, Freqs: a.Freqs, HeadDim: a.HeadDim,
		NHead: a.NHead, NKV: a.NKV, M: a.M, Ldq: a.Ldq, Ldo: a.Ldo, KVLen: a.KVLen, Pos0: a.Pos0, Flags: a.Flags,
		Scale: a.Scale, HeadStride: a.HeadStride, PosStride: a.PosStride, SeqStride: a.SeqStride, Window: a.Window,
		Mode: a.Mode, RopeDim: a.RopeDim}
}

// MatVec is the output product a RopeAttentionMatVec ends with: out =
// att·Wᵀ + bias + out over its one row.
func (a *RopeAttentionMatVecArgs) MatVec() MatVecArgs {
	n := a.N()
	return MatVecArgs{Type: a.Type, W: a.W, X: a.Att, Out: a.Out, Bias: a.Bias, Res: a.Out, N: n, K: n, M: min(a.M, 1),
		Ldx: n, Ldo: n, Ldr: n}
}

func rotDims(ropeDim, headDim int) int {
	if ropeDim == 0 {
		return headDim
	}
	return ropeDim
}

// OutRows is the number of output rows of a convolution:
// (T+2·pad−kw)/stride+1, or 0 when the input is shorter than the kernel.
func (a *Conv1DArgs) OutRows() int {
	span := a.T + 2*a.Pad
	if a.Stride == 0 || span < a.Kw {
		return 0
	}
	return (span-a.Kw)/a.Stride + 1
}

package plan

// Kernel identifies an operation of the kernel set. Every backend
// implements every kernel with exactly the semantics written here; the CPU
// backend is the reference the others are tested against.
//
// Conventions for all kernels:
//   - Activations are float32, row-major. "ld" parameters are row strides
//     in elements, so a kernel can read or write a slice of a wider buffer
//     (e.g. the Q, K and V parts of one fused QKV row).
//   - Binding offsets are in bytes. Optional bindings use NoBuf.
//   - Dispatch.Type is the element type of the kernel's typed input
//     (matrix weights, embedding table, KV cache); other inputs are f32.
//   - Float parameters are stored with F32() and read with PF().
//   - Weight matrices are ggml-ordered: n rows of k contiguous elements
//     (ne[0] = k), i.e. out = x·Wᵀ.
type Kernel uint16

const (
	// Embed: out[t, :] (+)= table[ids[t], :].
	// Bind: 0 table (Type, rows of P0 elements), 1 ids (i32), 2 out.
	// P: 0 dim, 1 n tokens, 2 ldo, 3 flags (bit0: accumulate into out).
	// Grid: n.
	Embed Kernel = iota + 1

	// RMSNorm: out[r] = x[r] / sqrt(mean(x[r]²) + eps) ⊙ w.
	// Rows are addressed in groups so per-head norms can work inside a
	// fused QKV row: row r lives at (r/inner)*ld + (r%inner)*dim.
	// Bind: 0 x, 1 w (f32[dim], or NoBuf for no scale), 2 out (may alias x).
	// P: 0 dim, 1 rows, 2 ldx, 3 ldo, 4 eps (f32), 5 inner (0 means 1).
	// Grid: rows.
	RMSNorm

	// LayerNorm: out[r] = (x[r]-mean)/sqrt(var+eps) ⊙ w + b (biased variance).
	// Bind: 0 x, 1 w (f32), 2 b (f32), 3 out (may alias x).
	// P: 0 dim, 1 rows, 2 ldx, 3 ldo, 4 eps (f32).
	// Grid: rows.
	LayerNorm

	// MatVec and MatMul: out[m, n] = x[m, k]·W[n, k]ᵀ + bias[n] + res[m, n].
	// Same semantics; MatVec is chosen by model code for small m (decode,
	// beams as m sequences), MatMul for prefill chunks and encoder windows,
	// so GPU backends can pick their kernel when the plan is built.
	// Quantized W is multiplied block by block against x quantized to
	// Type's activation format (ggml's vec_dot formulas).
	// Bind: 0 W (Type), 1 x, 2 out, 3 bias (f32[n] or NoBuf),
	//       4 res (f32, or NoBuf; may alias out).
	// P: 0 n, 1 k, 2 m, 3 ldx, 4 ldo, 5 ldr.
	// Grid: n, m.
	MatVec
	MatMul

	// RMSNormMatVec: out = (rmsnorm(x) ⊙ g)·Wᵀ + bias + res, one pass.
	// Bind: as MatVec, plus 5 g (f32[k]).  P: as MatVec, plus 6 eps (f32).
	RMSNormMatVec

	// SiLUMul: out[m, n] = silu(gate) ⊙ up.
	// Bind: 0 gate, 1 up, 2 out.  P: 0 n, 1 m, 2 ldg, 3 ldu, 4 ldo.
	SiLUMul

	// SiLUMulMatVec: out = (silu(gate) ⊙ up)·Wᵀ + bias + res (the FFN down
	// projection with its activation fused in).
	// Bind: 0 W, 1 gate, 2 out, 3 bias, 4 res, 5 up.
	// P: 0 n, 1 k, 2 m, 3 ldg, 4 ldo, 5 ldr, 6 ldu.
	SiLUMulMatVec

	// GELU: out = gelu(x) over m rows of n.
	// Bind: 0 x, 1 out (may alias).  P: 0 n, 1 m, 2 ldx, 3 ldo,
	// 4 mode (0 exact erf, as PyTorch's nn.GELU; 1 tanh approximation).
	GELU

	// Add: out = a + b. ldb == 0 broadcasts b's first row to every row.
	// Bind: 0 a, 1 b, 2 out (may alias a).  P: 0 n, 1 m, 2 lda, 3 ldb, 4 ldo.
	Add

	// Scale: out = x * s.
	// Bind: 0 x, 1 out.  P: 0 n, 1 m, 2 ldx, 3 ldo, 4 s (f32).
	Scale

	// Rope rotates heads in place. Token t is at position pos0+t (or pos0
	// for every row when flags bit1 says rows are separate sequences).
	// Pair (a, b) is (2i, 2i+1) in normal mode and (i, i+ropeDim/2) in NeoX
	// mode; angle = pos * freqs[i]; dims at or past ropeDim are untouched.
	// Bind: 0 x, 1 freqs (f32[ropeDim/2], inverse frequencies after any
	// context scaling).
	// P: 0 headDim, 1 nHead, 2 m, 3 ldx, 4 pos0, 5 mode (0 normal, 2 NeoX),
	// 6 ropeDim, 7 flags, 8 mscale (f32; 0 means 1).
	Rope

	// RopeKV: for m rows of a fused QKV buffer (Q: nHead heads at column 0,
	// K: nKV heads after Q, V: nKV heads after K), rotate Q in place and
	// rotate K (as Rope; freqs NoBuf = no rotation), then store K and V for
	// each row into the caches (Type f16 or f32). The rotated K is also
	// written back into the qkv row.
	// Cache element (seq s, kv head h, position p, dim i) is at
	// s*seqStride + h*headStride + p*posStride + i.
	// Rows are consecutive positions pos0+t of sequence 0, or, with flags
	// bit1, sequence t at position pos0.
	// Bind: 0 qkv, 1 freqs, 2 kcache, 3 vcache.
	// P: 0 headDim, 1 nHead, 2 nKV, 3 m, 4 ldqkv, 5 pos0, 6 mode,
	// 7 ropeDim, 8 headStride, 9 posStride, 10 seqStride, 11 flags,
	// 12 mscale (f32; 0 means 1).
	RopeKV

	// Attention: out[t, h] = softmax(scale·q[t,h]·K[kvh]ᵀ (+ causal mask))·V[kvh]
	// with kvh = h / (nHead/nKV). Keys 0..kvLen-1 are visible; with causal
	// (flags bit0) query t at position pos0+t sees keys ≤ pos0+t. With flags
	// bit1, query row t belongs to sequence t (beams) at position pos0.
	// K/V layout as RopeKV's caches (f32 projections work too: headStride
	// hd, posStride = row stride). If bind 4 is set, the softmax
	// probabilities are written to probs[h, t, j] with row stride P13 (the
	// cross-attention weights used for word timestamps); masked keys get
	// probability 0, and a query that sees no key gets a zero output.
	// Bind: 0 q, 1 K (Type), 2 V (Type), 3 out, 4 probs (f32 or NoBuf).
	// P: 0 headDim, 1 nHead, 2 nKV, 3 m, 4 ldq, 5 ldo, 6 kvLen, 7 pos0,
	// 8 flags, 9 scale (f32), 10 headStride, 11 posStride, 12 seqStride,
	// 13 probs row stride.
	Attention

	// Softmax over m rows of n, with the input scaled first.
	// Bind: 0 x, 1 out (may alias).  P: 0 n, 1 m, 2 ldx, 3 ldo, 4 scale (f32).
	Softmax

	// Conv1D: out[to, co] = bias[co] + Σ_ci Σ_j W[co, ci, j]·x[to*stride+j-pad, ci]
	// (zero outside the input). W is ggml-ordered ne = (kw, cin, cout).
	// x is time-major [T][cin] (row stride ldx), or channel-major
	// [cin][T] (row stride ldx) with flags bit0 (the mel spectrogram).
	// out is time-major with row stride ldo.
	// T is the input length; pad applies to both ends, so there are
	// (T+2·pad−kw)/stride+1 output rows.
	// Bind: 0 W (Type), 1 x, 2 bias (f32[cout] or NoBuf), 3 out.
	// P: 0 cin, 1 cout, 2 T, 3 kw, 4 stride, 5 pad, 6 flags, 7 ldx, 8 ldo.
	Conv1D

	// Argmax: out[t] = index of the largest of x[t, 0..n-1] (lowest index
	// on ties).
	// Bind: 0 x, 1 out (i32).  P: 0 n, 1 m, 2 ldx.
	Argmax

	// Sample draws one token from logits x[0..n-1]:
	//  1. penalties over the last histLen ids of hist: repetition (a logit
	//     l of a seen token becomes l/r if l > 0 else l*r), then
	//     presence and frequency (l -= presence + count*frequency);
	//  2. temperature; temp <= 0 means argmax (ties to the lowest index);
	//  3. top-k (0 = off), then softmax, top-p (1 = off) keeping the
	//     smallest prefix (by descending probability, ties by index) whose
	//     mass reaches p, then min-p (0 = off) relative to the top token;
	//  4. u = Uniform(seed, step); the token is the first in that order
	//     whose cumulative renormalised mass exceeds u.
	// The history is hist[0:histLen] (ids outside [0, n) are ignored); NaN
	// logits count as −Inf; "descending probability" is descending scaled
	// logit with ties to the lower id.
	// Bind: 0 x (f32[n], left unchanged), 1 out (i32), 2 hist (i32, or
	// NoBuf), 3 scratch (f32[2n], the backend's working space).
	// P: 0 n, 1 topK, 2 topP (f32), 3 minP (f32), 4 temp (f32),
	// 5 repeat (f32; 0 or 1 = off), 6 seed lo, 7 seed hi, 8 histLen,
	// 9 step, 10 presence (f32), 11 frequency (f32).
	Sample

	// Copy converts m rows of n f32 values into Type (f32, f16 or bf16).
	// Bind: 0 src (f32), 1 dst (Type).  P: 0 n, 1 m, 2 lds, 3 ldd.
	Copy

	numKernels
)

// Flags bits shared by several kernels.
const (
	FlagAccumulate = 1 << 0 // Embed
	FlagCausal     = 1 << 0 // Attention
	FlagChannelMaj = 1 << 0 // Conv1D
	FlagPerSeqRows = 1 << 1 // Rope, RopeKV, Attention: row t is sequence t
)

// Rope modes, as in ggml.
const (
	RopeNormal = 0
	RopeNeoX   = 2
)

// KernelInfo is static knowledge about a kernel.
type KernelInfo struct {
	Name    string
	MinBind int // bindings that must be present (trailing ones are optional)
}

var kernelInfo = map[Kernel]KernelInfo{
	Embed:         {"embed", 3},
	RMSNorm:       {"rms_norm", 3},
	LayerNorm:     {"layer_norm", 4},
	MatVec:        {"mat_vec", 3},
	MatMul:        {"mat_mul", 3},
	RMSNormMatVec: {"rms_norm_mat_vec", 6},
	SiLUMul:       {"silu_mul", 3},
	SiLUMulMatVec: {"silu_mul_mat_vec", 6},
	GELU:          {"gelu", 2},
	Add:           {"add", 3},
	Scale:         {"scale", 2},
	Rope:          {"rope", 2},
	RopeKV:        {"rope_kv", 4},
	Attention:     {"attention", 4},
	Softmax:       {"softmax", 2},
	Conv1D:        {"conv1d", 4},
	Argmax:        {"argmax", 2},
	Sample:        {"sample", 4},
	Copy:          {"copy", 2},
}

// Info returns the kernel's static description.
func (k Kernel) Info() (KernelInfo, bool) { i, ok := kernelInfo[k]; return i, ok }

func (k Kernel) String() string {
	if i, ok := kernelInfo[k]; ok {
		return i.Name
	}
	return "kernel?"
}

// Kernels lists every kernel of the set, in id order.
func Kernels() []Kernel {
	ks := make([]Kernel, 0, numKernels-1)
	for k := Embed; k < numKernels; k++ {
		ks = append(ks, k)
	}
	return ks
}

package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Launch rules of the matrix kernels: mat_vec (and its RMSNorm and SiLU·mul
// fused forms), mat_mul, conv1d and embed, one MSL instantiation per weight
// type (matvec.metal, matmul.metal, conv1d.metal, embed.metal; block
// layouts and dequantisation in common.metal).
//
// Deviation from the CPU backend (allowed by the kernel contract's "GPU
// backends may" and measured in msltest/matrix_test.go): for quantized
// weights the CPU quantizes each activation row to q8_0/q8_1/q8_K and uses
// ggml's integer block dot products; the GPU kernels multiply the
// dequantized weights by the float activations, as ggml's Metal backend
// does. The GPU result is therefore closer to the exact product (within
// ~1e-6 relative in the tests); the two differ by the activation
// quantization error, measured up to 2.2e-2 of the output's magnitude on
// random data (q2_K, fused SiLU), 1.3e-2 for plain mat_vec.
// The exception: under Tuning.MatVecQ8K, decode's q8_0/q4_0 mat-vecs
// quantize the activations as the CPU does (matvec_q8.metal).

// Function-constant indices of the matrix kernels (20..29 are reserved for
// them).
const (
	fcMatVecRows   = 20
	fcMatVecBatch  = 21
	fcMatVecXAlign = 22
)

// MatVecMaxThreads bounds a mat_vec threadgroup (8 SIMD-groups). The CUDA
// entries of the mat_vec kernels are compiled for at most this many
// threads (cuda/gen), so ptxas may give them up to 255 registers a thread
// instead of the 64 a 1024-thread bound allows: at 64 their row and
// activation arrays spilled to local memory (1.1 KB stack frames).
const MatVecMaxThreads = 256

// MatVecWideK is the product width from which Tuning.MatVecRowsWide
// applies.
const MatVecWideK = 2048

// Tile geometry of mm_core (common.metal: MM_BN, MM_BM, MM_THREADS).
const (
	mmBN      = 64
	mmBM      = 32
	mmThreads = 128
)

// MatMulMMARows is the CUDA host's Tuning.MatMulMMA on sm_80 GPUs: from
// 16 rows, a whole m16 tensor-core tile of every warp's sub-tile holds
// rows (mat_mul is planned for prefill chunks, encoder windows and
// batches; below 16 the products are mat-vecs).
const MatMulMMARows = 16

// mmaNames are the tensor-core mat_mul variants (cuda/native/mat_mul_mma.cu).
var mmaNames = map[ggml.Type]string{ggml.F16: "mat_mul_mma_f16", ggml.BF16: "mat_mul_mma_bf16", ggml.Q8_0: "mat_mul_mma_q8_0", ggml.Q4_0: "mat_mul_mma_q4_0"}

// convMMANames are the tensor-core conv1d variants (the same source: conv1d
// is mm_core over the im2col view, so its twin is conv1d itself).
var convMMANames = map[ggml.Type]string{ggml.F16: "conv1d_mma_f16", ggml.Q8_0: "conv1d_mma_q8_0", ggml.Q4_0: "conv1d_mma_q4_0"}

// typeSuffix names each weight type in the MSL function names; the
// supported set is the CPU backend's (engine/cpu/matmul_kind.go).
var typeSuffix = map[ggml.Type]string{
	ggml.F32: "f32", ggml.F16: "f16", ggml.BF16: "bf16",
	ggml.Q4_0: "q4_0", ggml.Q4_1: "q4_1", ggml.Q5_0: "q5_0", ggml.Q5_1: "q5_1", ggml.Q8_0: "q8_0",
	ggml.Q2_K: "q2_k", ggml.Q3_K: "q3_k", ggml.Q4_K: "q4_k", ggml.Q5_K: "q5_k", ggml.Q6_K: "q6_k",
	ggml.IQ4_NL: "iq4_nl",
}

// MatrixTypes lists the weight types the matrix kernels support.
func MatrixTypes() []ggml.Type {
	return []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1,
		ggml.Q8_0, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_NL}
}

// matrixKernels are the kernels with one instantiation per weight type.
var matrixKernels = []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.MatMul, plan.Embed, plan.Conv1D}

// fnNames holds every "<kernel>_<type>" name, built once so that LaunchFor
// does not allocate.
var fnNames = map[plan.Kernel]map[ggml.Type]string{}

// mvConstants[r-1][b-1][xa] holds mat_vec's function constants for r
// rows, b batch rows and aligned activations or not (shared, read-only
// slices, so launches do not allocate).
var mvConstants [4][8][2][]Constant

func init() {
	for r := range mvConstants {
		for b := range mvConstants[r] {
			for xa := range mvConstants[r][b] {
				mvConstants[r][b][xa] = []Constant{{fcMatVecRows, uint32(r + 1)}, {fcMatVecBatch, uint32(b + 1)}, {fcMatVecXAlign, uint32(xa)}}
			}
		}
	}
	for _, k := range matrixKernels {
		m := map[ggml.Type]string{}
		for t, s := range typeSuffix {
			m[t] = k.String() + "_" + s
		}
		fnNames[k] = m
	}
	// LayerNormMatVec's instances: plan.LayerNormMatVecType's types
	fnNames[plan.LayerNormMatVec] = map[ggml.Type]string{}
	for t, s := range typeSuffix {
		if plan.LayerNormMatVecType(t) {
			fnNames[plan.LayerNormMatVec][t] = plan.LayerNormMatVec.String() + "_" + s
		}
	}
	register(plan.MatVec, launchMatVec)
	register(plan.RMSNormMatVec, launchMatVec)
	register(plan.LayerNormMatVec, launchMatVec)
	register(plan.SiLUMulMatVec, launchMatVec)
	register(plan.GELUMulMatVec, launchMatVec)
	register(plan.MatMul, launchMatMul)
	register(plan.Conv1D, launchConv1D)
	register(plan.Embed, launchEmbed)
}

// fnName returns the function of kernel d.Kernel for d.Type.
func fnName(d *plan.Dispatch) (string, error) {
	name, ok := fnNames[d.Kernel][d.Type]
	if !ok {
		return "", fmt.Errorf("shaders: %s: weight type %s is not supported", d.Kernel, d.Type)
	}
	return name, nil
}

// checkK verifies that a row of k elements is a positive whole number of
// d.Type's blocks, as the CPU backend requires.
func checkK(d *plan.Dispatch, what string, k uint64) error {
	bs := uint64(d.Type.BlockSize())
	if k == 0 || k%bs != 0 || k > 1<<31-1 {
		return fmt.Errorf("shaders: %s: %s=%d is not a positive multiple of %s's block size %d", d.Kernel, what, k, d.Type, bs)
	}
	return nil
}

func ceilDiv(a, b uint32) uint32 { return (a + b - 1) / b }

// knob returns v, or def when v is zero, clamped to hi.
func knob(v, def, hi uint32) uint32 {
	if v == 0 {
		v = def
	}
	return min(v, hi)
}

func launchMatVec(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	return matVecLaunches(d, t, dst, true)
}

// matVecLaunches is mat_vec's launch rule; pre allows Tuning.MatVecQ8PreK's
// pre-pass (not where x is made inside the product's own launch).
func matVecLaunches(d *plan.Dispatch, t *Tuning, dst []Launch, pre bool) ([]Launch, error) {
	name, err := fnName(d)
	if err != nil {
		return dst, err
	}
	a := plan.DecodeProduct(d)
	n, k, m := uint32(a.N), uint32(a.K), uint32(a.M)
	if n == 0 || m == 0 {
		return dst, nil
	}
	if err := checkK(d, "k", uint64(k)); err != nil {
		return dst, err
	}
	q8k := t.MatVecQ8K
	if d.Type == ggml.Q8_0 {
		q8k = t.MatVecQ8KQ8_0
	}
	if q8, ok := q8xNames[d.Kernel][d.Type]; ok && q8k != 0 && k >= q8k && k <= MatVecQ8MaxK && m == 1 && alignedInputs(d, t, k) {
		rows := knob(t.MatVecQ8Rows, defMatVecQ8Rows, 4)
		sg := knob(t.MatVecQ8SIMDGroups, defMatVecQ8SIMDGroups, max(1, min(t.MaxThreads, MatVecMaxThreads)/32))
		capG := t.MatVecQ8Groups
		if k >= MatVecQ8LongK {
			rows = knob(t.MatVecQ8RowsLong, rows, 4)
			sg = knob(t.MatVecQ8SIMDGroupsLong, sg, max(1, min(t.MaxThreads, MatVecMaxThreads)/32))
			if t.MatVecQ8GroupsLong > 0 {
				capG = t.MatVecQ8GroupsLong
			}
		}
		prePass := pre && k >= t.MatVecQ8PreK && rows == q8pRows
		if prePass && k < MatVecQ8LongK && t.MatVecQ8GroupsPre > 0 {
			capG = t.MatVecQ8GroupsPre
		}
		groups := ceilDiv(n, rows*sg)
		if t.Cores > 0 && capG > 0 {
			groups = uint32(min(uint64(groups), uint64(t.Cores)*uint64(capG)))
		}
		l := Launch{
			Function:  q8,
			Groups:    [3]uint32{groups, m, 1},
			Threads:   [3]uint32{32 * sg, 1, 1},
			Constants: mvConstants[rows-1][0][1],
		}
		if !prePass {
			return append(dst, l), nil
		}
		// x' quantized once, then the product on its blocks
		l.Function, l.Scratch = q8pNames[d.Type], q8pScratch(k)
		return append(dst, Launch{
			Function: q8pQuantize[d.Kernel],
			Groups:   [3]uint32{ceilDiv(k/32, 8), 1, 1},
			Threads:  [3]uint32{256, 1, 1},
			Scratch:  l.Scratch,
		}, l), nil
	}
	if l, ok := launchMatVecRows(d, t, n, k, m); ok {
		return append(dst, l), nil
	}
	rows := knob(t.MatVecRows, defMatVecRows, 4)
	if k >= MatVecWideK {
		rows = knob(t.MatVecRowsWide, rows, 4)
	}
	batch := knob(t.MatVecBatch, defMatVecBatch, 8)
	if m > batch {
		batch = min(batch, knob(t.MatVecBatchMany, batch, 8))
	}
	sg := knob(t.MatVecSIMDGroups, defMatVecSIMDGroups, max(1, min(t.MaxThreads, MatVecMaxThreads)/32))
	if a16, ok := a16Names[d.Kernel]; ok && a16Rows(d, t, k) {
		name = a16
	}
	l := Launch{
		Function: name,
		Groups:   [3]uint32{ceilDiv(n, rows*sg), ceilDiv(m, batch), 1},
		Threads:  [3]uint32{32 * sg, 1, 1},
	}
	xa := 0
	if alignedInputs(d, t, k) {
		xa = 1
	}
	l.Constants = mvConstants[rows-1][batch-1][xa]
	return append(dst, l), nil
}

// MatVecQ8LongK is the product width from which the 8-bit-activation
// mat-vecs take Tuning's ...Long geometry.
const MatVecQ8LongK = 4096

// MatVecQ8MaxK is the widest product the 8-bit-activation mat-vecs take
// (MQ_MAX_K in matvec_q8.metal: the quantized row in threadgroup memory).
const MatVecQ8MaxK = 16384

// Defaults of the 8-bit-activation mat-vecs' geometry (Tuning.MatVecQ8Rows,
// MatVecQ8SIMDGroups).
const (
	defMatVecQ8Rows       = 2
	defMatVecQ8SIMDGroups = 4
)

// q8xNames are the 8-bit-activation mat-vec instances (matvec_q8.metal)
// of the four forms, q8_0 and q4_0 weights in the file's layout; their
// repacked instances add "_rp" (repack.go).
// (A variable's initializer, not init: repack.go's init reads it.)
var q8xNames = func() map[plan.Kernel]map[ggml.Type]string {
	names := map[plan.Kernel]map[ggml.Type]string{}
	for _, k := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec} {
		names[k] = map[ggml.Type]string{}
		for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
			names[k][t] = k.String() + "_" + typeSuffix[t] + "_q8x"
		}
	}
	return names
}()

// q8pQuantize are the pre-passes of Tuning.MatVecQ8PreK per form, and
// q8pNames the products on their blocks per weight type (the file's
// layout; "_rp": repack.go). matvec_q8.metal, "The pre-quantized path".
var (
	q8pQuantize = map[plan.Kernel]string{plan.MatVec: "quantize_q8x", plan.RMSNormMatVec: "rms_norm_quantize_q8x",
		plan.SiLUMulMatVec: "silu_mul_quantize_q8x", plan.GELUMulMatVec: "gelu_mul_quantize_q8x"}
	q8pNames = map[ggml.Type]string{ggml.Q8_0: "mat_vec_q8_0_q8p", ggml.Q4_0: "mat_vec_q4_0_q8p"}
)

// q8pRows is mat_vec_q8p's weight rows a SIMD-group, fixed at compile time
// (MQ_P_ROWS) so that its row arrays hold no more (202 registers a thread
// with them sized for 4); at other MatVecQ8Rows the in-kernel path runs.
const q8pRows = 2

// q8pScratch is the scratch of one quantized activation row of k
// elements: the 16-byte head, k codes, and three words a 32-block (scale,
// code sum, Σx²).
func q8pScratch(k uint32) uint32 { return 16 + k + 12*(k/32) }

// Aligned16 is the Tuning.Align16 value of a host whose weights buffers
// start 16-byte aligned.
const Aligned16 = 2

// a16Names are the mat-vec instances for f16 rows loaded 16 bytes at a
// time (a16_f16 in common.metal).
var a16Names = map[plan.Kernel]string{
	plan.MatVec: "mat_vec_f16_a16", plan.RMSNormMatVec: "rms_norm_mat_vec_f16_a16",
	plan.SiLUMulMatVec: "silu_mul_mat_vec_f16_a16", plan.GELUMulMatVec: "gelu_mul_mat_vec_f16_a16",
	plan.LayerNormMatVec: "layer_norm_mat_vec_f16_a16",
}

// a16Rows reports whether d's f16 weight rows of k elements are 16-byte
// aligned: the host promises the buffer's start (t.Align16), the binding's
// offset (after its patches) and the row size keep it, and k is whole
// 16-element chunks (the aligned load reads two 16-byte words a chunk).
func a16Rows(d *plan.Dispatch, t *Tuning, k uint32) bool {
	return d.Type == ggml.F16 && t.Align16 == Aligned16 && d.NBind > 0 && d.Bind[0].Off%16 == 0 && k%16 == 0
}

// alignedInputs reports whether a mat-vec's activation rows start 16-byte
// aligned (function constant 22): the host promises its buffers' starts
// (t.Align16, as for the weights), the bindings' offsets keep it, and so
// do the row strides where there is more than one row; k is whole
// 16-element chunks. The second input (the RMSNorm weight, or up) too,
// for the forms that read one, and LayerNorm's weight and bias.
func alignedInputs(d *plan.Dispatch, t *Tuning, k uint32) bool {
	if t.Align16 != Aligned16 || k%16 != 0 || d.NBind < 2 {
		return false
	}
	a := plan.DecodeProduct(d)
	rows := a.M > 1
	if a.X.Off%16 != 0 || (rows && a.Ldx%4 != 0) {
		return false
	}
	switch d.Kernel {
	case plan.RMSNormMatVec:
		return d.NBind > 5 && d.Bind[5].Off%16 == 0
	case plan.LayerNormMatVec:
		return d.NBind > 6 && d.Bind[5].Off%16 == 0 && d.Bind[6].Off%16 == 0
	case plan.SiLUMulMatVec, plan.GELUMulMatVec:
		g := plan.DecodeGated(d)
		return g.Up.Off%16 == 0 && (!rows || g.Ldu%4 == 0)
	}
	return true
}

func launchMatMul(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	name, err := fnName(d)
	if err != nil {
		return dst, err
	}
	a := plan.DecodeMatMul(d)
	n, k, m := uint32(a.N), uint32(a.K), uint32(a.M)
	if n == 0 || m == 0 {
		return dst, nil
	}
	if err := checkK(d, "k", uint64(k)); err != nil {
		return dst, err
	}
	if ls, ok := launchMatMulQ8A(d, t, n, k, m); ok {
		return append(dst, ls[0], ls[1]), nil
	}
	if l, ok := launchMatMulBig(d, t, n, m); ok {
		return append(dst, l), nil
	}
	if mma, ok := mmaNames[d.Type]; ok && t.MatMulMMA != 0 && m >= t.MatMulMMA {
		name = mma
	}
	return append(dst, Launch{
		Function: name,
		Groups:   [3]uint32{ceilDiv(n, mmBN), ceilDiv(m, mmBM), 1},
		Threads:  [3]uint32{mmThreads, 1, 1},
	}), nil
}

func launchConv1D(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	name, err := fnName(d)
	if err != nil {
		return dst, err
	}
	a := plan.DecodeConv1D(d)
	cin, cout, T, kw, stride, pad := uint64(a.Cin), uint64(a.Cout), uint64(a.T), uint64(a.Kw), uint64(a.Stride), uint64(a.Pad)
	if cin == 0 || cout == 0 || kw == 0 || stride == 0 {
		return dst, fmt.Errorf("shaders: conv1d: empty convolution (cin %d, cout %d, kw %d, stride %d)", cin, cout, kw, stride)
	}
	span := T + 2*pad
	if span < kw || span > 1<<31-1 {
		return dst, fmt.Errorf("shaders: conv1d: input of %d steps (pad %d) does not fit the kernel %d", T, pad, kw)
	}
	if err := checkK(d, "cin·kw", cin*kw); err != nil {
		return dst, err
	}
	tout := (span-kw)/stride + 1
	if mma, ok := convMMANames[d.Type]; ok && t.MatMulMMA != 0 && tout >= uint64(t.MatMulMMA) {
		name = mma
	}
	return append(dst, Launch{
		Function: name,
		Groups:   [3]uint32{ceilDiv(uint32(cout), mmBN), ceilDiv(uint32(tout), mmBM), 1},
		Threads:  [3]uint32{mmThreads, 1, 1},
	}), nil
}

func launchEmbed(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	name, err := fnName(d)
	if err != nil {
		return dst, err
	}
	a := plan.DecodeEmbed(d)
	dim, n := uint32(a.Dim), uint32(a.N)
	if n == 0 || dim == 0 {
		return dst, nil
	}
	if err := checkK(d, "dim", uint64(dim)); err != nil {
		return dst, err
	}
	th := knob(t.EmbedThreads, defEmbedThreads, max(32, t.MaxThreads)) &^ 31
	return append(dst, Launch{
		Function: name,
		Groups:   [3]uint32{n, 1, 1},
		Threads:  [3]uint32{max(th, 32), 1, 1},
	}), nil
}

// MatVecRowsNativeRows is the CUDA host's Tuning.MatVecRowsNative with
// the sm_80 module: every batch step on the mat-vec path (engine/runtime:
// GEMMs from 17 rows on CUDA).
const MatVecRowsNativeRows = 16

// mvRowsTypes are the weight types of the native multi-row mat-vecs
// (cuda/native/mat_vec_rows.cu): mat_vec_rows4_<type> and
// mat_vec_rows8_<type> (4 or 8 activation rows a block,
// Tuning.MatVecRowsNativeBatch), "_rp" their repacked instances
// (repack.go); mvRowsPerBlock is their weight rows a block (two a warp,
// four warps).
var mvRowsTypes = map[ggml.Type]bool{ggml.Q8_0: true}

const mvRowsPerBlock = 8

// MatVecRowsMMARows is the CUDA host's Tuning.MatVecRowsMMA with the
// sm_80 module: from 4 rows the tensor-core form beat mat_vec_rows4 on
// the SmolLM2 shape's products (an H200, graph replays of the 16-row
// step's 121 products: 0.52 ms against 1.46 at 16 rows, against 0.64 ms
// for mat_vec_rows4 at 4 rows; bench/cuda/20261203-b38s29).
const MatVecRowsMMARows = 4

// MatVecRowsMMAMaxRows is the CUDA host's Tuning.MatVecRowsMMAMax with
// the sm_80 module: a batch step of up to 128 rows (the batch plan's
// budget: 16 streams decoding and prompt chunks beside them, or a prompt
// admitted alone) keeps its products on the tensor-core mat-vec, whose
// weights are read once a tile and then from L2 for each further column
// of 16 rows: the SmolLM2-shape q8_0 step took 2.62 ms at 64 rows against
// the GEMM's 4.8-5.0 at any row count from 17 (H200,
// bench/cuda/20261203-b38s31).
const MatVecRowsMMAMaxRows = 128

// mvRowsMMAName is the tensor-core multi-row mat-vec (one n8 tile of
// weight rows a block of mvRowsMMAThreads, up to 16 activation rows).
func mvRowsMMAName(t ggml.Type) string { return "mat_vec_rows_mma_" + typeSuffix[t] }

const mvRowsMMAThreads = 256

// mvRowsName is the native multi-row mat-vec of batch rows a block.
func mvRowsName(batch uint32, t ggml.Type) string {
	return fmt.Sprintf("mat_vec_rows%d_%s", batch, typeSuffix[t])
}

// launchMatVecRows is the native multi-row mat-vec's launch (Tuning.MatVecRowsNative):
// a plain q8_0 product of 2 to MatVecRowsNative rows, narrower than
// MatVecWideK, with aligned activation rows; from Tuning.MatVecRowsMMA
// rows (up to 16, or Tuning.MatVecRowsMMAMax) its tensor-core form.
func launchMatVecRows(d *plan.Dispatch, t *Tuning, n, k, m uint32) (Launch, bool) {
	mmaMax := uint32(0)
	if t.MatVecRowsMMA >= 2 && t.MatVecRowsNative >= 2 {
		mmaMax = max(16, t.MatVecRowsMMAMax)
	}
	if !mvRowsTypes[d.Type] || d.Kernel != plan.MatVec || m < 2 || m > max(t.MatVecRowsNative, mmaMax) || k >= MatVecWideK || k%32 != 0 ||
		plan.DecodeMatVec(d).Flags&plan.FlagGELUOut != 0 || !alignedInputs(d, t, k) {
		return Launch{}, false
	}
	if mmaMax > 0 && m >= t.MatVecRowsMMA && m <= mmaMax {
		return Launch{Function: mvRowsMMAName(d.Type), Groups: [3]uint32{ceilDiv(n, 8) * ceilDiv(m, 16), 1, 1},
			Threads: [3]uint32{mvRowsMMAThreads, 1, 1}}, true
	}
	if m > t.MatVecRowsNative {
		return Launch{}, false
	}
	batch := uint32(4)
	if t.MatVecRowsNativeBatch >= 8 {
		batch = 8
	}
	return Launch{Function: mvRowsName(batch, d.Type), Groups: [3]uint32{ceilDiv(n, mvRowsPerBlock), ceilDiv(m, batch), 1},
		Threads: [3]uint32{32 * mvRowsPerBlock / 2, 1, 1}}, true
}

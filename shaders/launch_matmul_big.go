package shaders

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// The large-tile f16 mat_mul (Tuning.MatMulBig): 128×128 output tiles,
// native CUDA where the host loaded the native modules
// (cuda/native/mat_mul_big.cu, mat_mul_wgmma.cu), else their MSL twins
// of the same blocking (matmul_t128.metal), as the q8a/mmq pair.
const (
	bigBN, bigBM = 128, 128
	bigThreads   = 256
	// MatMulBigTiles is the CUDA host's Tuning.MatMulBig on sm_80 GPUs:
	// about half an H200's 132 multiprocessors. At 4096×4096×512 (128
	// tiles) mat_mul_big_f16 took 0.157 ms against mat_mul_mma_f16's
	// 0.378; where between 48 tiles (mat_mul_mma) and 128 the two cross
	// was not measured.
	MatMulBigTiles = 64
)

// bigSmem is mat_mul_big's dynamic shared memory (Smem in
// mat_mul_big.cu): 4 ring stages of an 8 KB f16 weight tile and a 16 KB
// f32 activation tile, two f16 activation tiles (twice that when split).
func bigSmem(split bool) uint32 {
	x16 := uint32(2 * 8192)
	if split {
		x16 *= 2
	}
	return 4*(8192+16384) + x16
}

// mat_mul_wgmma's block (mat_mul_wgmma.cu): two producer and two consumer
// warpgroups; its dynamic shared memory (Smem): 6 ring stages of a 16 KB
// f16 weight tile and a 16 KB f16 activation tile, and 1 KB to align the
// ring to 1024 bytes.
const (
	wgmmaThreads = 512
	wgmmaSmem    = 6*(16384+16384) + 1024
)

// t128Smem is a mat_mul_t128 twin's dynamic threadgroup memory
// (matmul_t128.metal): the weights' and the activations' f16 tiles (hi,
// and lo when split) of 128 rows of bk halves (the epilogue's staging
// reuses them).
func t128Smem(bk uint32, split bool) uint32 {
	tiles := uint32(2)
	if split {
		tiles = 3
	}
	return tiles * 128 * bk * 2
}

// launchMatMulBig returns the large-tile launch of an f16 mat_mul under
// t, or false: from t.MatMulBig tiles and the rows the tensor-core
// products start at (t.MatMulMMA; MatMulMMARows for the twins).
// mat_mul_big_f16 keeps float activations (hi + lo); t.MatMulBigHalf
// takes mat_mul_big_f16_h and, from t.MatMulWGMMA tiles, mat_mul_wgmma_f16
// (both f16 activations).
func launchMatMulBig(d *plan.Dispatch, t *Tuning, n, m uint32) (Launch, bool) {
	native := t.MatMulMMA != 0
	rows := t.MatMulMMA
	if !native {
		rows = MatMulMMARows
	}
	tiles := uint64(ceilDiv(n, bigBN)) * uint64(ceilDiv(m, bigBM))
	if d.Type != ggml.F16 || t.MatMulBig == 0 || m < rows || tiles < uint64(t.MatMulBig) {
		return Launch{}, false
	}
	l := Launch{
		Groups:  [3]uint32{ceilDiv(n, bigBN), ceilDiv(m, bigBM), 1},
		Threads: [3]uint32{bigThreads, 1, 1},
	}
	switch wg := t.MatMulWGMMA != 0 && tiles >= uint64(t.MatMulWGMMA); {
	case wg && native:
		l.Function, l.Threads[0], l.Threadgroup = "mat_mul_wgmma_f16", wgmmaThreads, wgmmaSmem
	case wg: // the consumer warps' layout; the producers' copies are the threadgroup's
		l.Function, l.Threadgroup = "mat_mul_t128_wg_f16", t128Smem(64, false)
	case t.MatMulBigHalf != 0 && native:
		l.Function, l.Threadgroup = "mat_mul_big_f16_h", bigSmem(false)
	case t.MatMulBigHalf != 0:
		l.Function, l.Threadgroup = "mat_mul_t128_f16_h", t128Smem(32, false)
	case native:
		l.Function, l.Threadgroup = "mat_mul_big_f16", bigSmem(true)
	default:
		l.Function, l.Threadgroup = "mat_mul_t128_f16", t128Smem(32, true)
	}
	return l, true
}

package shaders

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func TestMatrixLaunchGeometry(t *testing.T) {
	d := plan.MatVecArgs{Type: ggml.Q4_K, N: 4097, K: 512, M: 10}.Dispatch()
	lns, err := LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, []Launch{{
		Function:  "mat_vec_q4_k",
		Groups:    [3]uint32{(4097 + 7) / 8, 2, 1}, // 4 rows × 2 SIMD-groups; 8 x rows per group
		Threads:   [3]uint32{64, 1, 1},
		Constants: []Constant{{fcMatVecRows, 4}, {fcMatVecBatch, 8}, {fcMatVecXAlign, 0}},
	}}, lns)

	// the cuda family without the 8-bit-activation mat-vecs: 2 rows per
	// warp, 4 from MatVecWideK on; 4 warps
	cuda := TuningFor("cuda")
	cuda0, err := Override(cuda, "MatVecQ8K=1000000,MatVecQ8KQ8_0=1000000")
	require.NoError(t, err)
	for _, c := range []struct{ k, rows uint32 }{{576, 2}, {MatVecWideK - 32, 2}, {MatVecWideK, 4}, {8192, 4}} {
		d = plan.RMSNormMatVecArgs{Type: ggml.Q8_0, N: 3072, K: int(c.k), M: 1}.Dispatch()
		lns, err = LaunchFor(&d, &cuda0, nil)
		require.NoError(t, err)
		require.Equal(t, [3]uint32{3072 / (4 * c.rows), 1, 1}, lns[0].Groups, "k=%d", c.k)
		require.Equal(t, []Constant{{fcMatVecRows, c.rows}, {fcMatVecBatch, 8}, {fcMatVecXAlign, 1}}, lns[0].Constants, "k=%d", c.k)
	}

	// more activation rows than MatVecBatch (the batch plan's 16-row
	// steps): MatVecBatchMany (4) rows a group; up to 8 (a Whisper 5-beam
	// decode), one group over them all
	for _, c := range []struct{ m, groups, batch uint32 }{{1, 1, 8}, {5, 1, 8}, {8, 1, 8}, {9, 3, 4}, {16, 4, 4}} {
		d = plan.MatVecArgs{Type: ggml.Q8_0, N: 576, K: 576, M: int(c.m), Ldx: 576}.Dispatch()
		lns, err = LaunchFor(&d, &cuda0, nil)
		require.NoError(t, err)
		require.Equal(t, [3]uint32{576 / 8, c.groups, 1}, lns[0].Groups, "m=%d", c.m)
		require.Equal(t, []Constant{{fcMatVecRows, 2}, {fcMatVecBatch, c.batch}, {fcMatVecXAlign, 1}}, lns[0].Constants, "m=%d", c.m)
	}

	// the native multi-row q8_0 mat-vec where the CUDA host sets
	// MatVecRowsNative (the sm_80 module): plain products of 2 to 16
	// aligned rows, narrower than MatVecWideK; 4 activation rows a block
	// (8 with MatVecRowsNativeBatch), 8 weight rows (4 warps of 2)
	native := cuda
	native.MatVecRowsNative = MatVecRowsNativeRows
	native8 := native
	native8.MatVecRowsNativeBatch = 8
	// from MatVecRowsMMA rows (the CUDA host's 4), its tensor-core form:
	// one n8 tile of weight rows a block of 256 threads, every row of it
	nativeMMA := native
	nativeMMA.MatVecRowsMMA = MatVecRowsMMARows
	// to MatVecRowsMMAMax rows (here 64; the CUDA host's 128): a column of
	// 16 rows a block past 16, ceil(n/8) · ceil(m/16) blocks
	nativeMMA64 := nativeMMA
	nativeMMA64.MatVecRowsMMAMax = 64
	nativeMMA128 := nativeMMA
	nativeMMA128.MatVecRowsMMAMax = MatVecRowsMMAMaxRows
	for _, c := range []struct {
		tun  *Tuning
		kern plan.Kernel
		typ  ggml.Type
		k, m int
		ldx  int
		fl   uint32
		want string
		gy   uint32
	}{
		{&native, plan.MatVec, ggml.Q8_0, 576, 16, 576, 0, "mat_vec_rows4_q8_0", 4},
		{&native, plan.MatVec, ggml.Q8_0, 1536, 2, 1536, 0, "mat_vec_rows4_q8_0", 1},
		{&native8, plan.MatVec, ggml.Q8_0, 576, 16, 576, 0, "mat_vec_rows8_q8_0", 2},
		{&native8, plan.MatVec, ggml.Q8_0, 576, 9, 576, 0, "mat_vec_rows8_q8_0", 2},
		{&native, plan.MatVec, ggml.Q8_0, 576, 1, 576, 0, "mat_vec_q8_0", 1},
		{&native, plan.MatVec, ggml.Q8_0, 576, 17, 576, 0, "mat_vec_q8_0", 5},
		{&native, plan.MatVec, ggml.Q8_0, 576, 16, 578, 0, "mat_vec_q8_0", 4},
		{&native, plan.MatVec, ggml.Q8_0, 576, 16, 576, plan.FlagGELUOut, "mat_vec_q8_0", 4},
		{&native, plan.MatVec, ggml.Q8_0, MatVecWideK, 16, MatVecWideK, 0, "mat_vec_q8_0", 4},
		{&native, plan.MatVec, ggml.Q4_0, 576, 16, 576, 0, "mat_vec_q4_0", 4},
		{&cuda, plan.MatVec, ggml.Q8_0, 576, 16, 576, 0, "mat_vec_q8_0", 4},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 16, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 1536, 4, 1536, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 3, 576, 0, "mat_vec_rows4_q8_0", 1},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 1, 576, 0, "mat_vec_q8_0", 1},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 17, 576, 0, "mat_vec_q8_0", 5},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 16, 578, 0, "mat_vec_q8_0", 4},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, 576, 16, 576, plan.FlagGELUOut, "mat_vec_q8_0", 4},
		{&nativeMMA, plan.MatVec, ggml.Q8_0, MatVecWideK, 16, MatVecWideK, 0, "mat_vec_q8_0", 4},
		{&nativeMMA, plan.MatVec, ggml.Q4_0, 576, 16, 576, 0, "mat_vec_q4_0", 4},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 16, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 17, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 1536, 40, 1536, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 64, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 65, 576, 0, "mat_vec_q8_0", 17},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 3, 576, 0, "mat_vec_rows4_q8_0", 1},
		{&nativeMMA64, plan.MatVec, ggml.Q8_0, 576, 40, 578, 0, "mat_vec_q8_0", 10},
		{&nativeMMA64, plan.MatVec, ggml.Q4_0, 576, 40, 576, 0, "mat_vec_q4_0", 10},
		{&nativeMMA128, plan.MatVec, ggml.Q8_0, 576, 128, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA128, plan.MatVec, ggml.Q8_0, 576, 100, 576, 0, "mat_vec_rows_mma_q8_0", 1},
		{&nativeMMA128, plan.MatVec, ggml.Q8_0, 576, 129, 576, 0, "mat_vec_q8_0", 33},
	} {
		d = plan.MatVecArgs{Type: c.typ, Bias: plan.None, Res: plan.None, N: 576, K: c.k, M: c.m, Ldx: c.ldx, Ldo: 576, Ldr: 576, Flags: c.fl}.Dispatch()
		lns, err = LaunchFor(&d, c.tun, nil)
		require.NoError(t, err)
		require.Len(t, lns, 1)
		require.Equal(t, c.want, lns[0].Function, "%+v", c)
		require.Equal(t, c.gy, lns[0].Groups[1], "%+v", c)
		if strings.HasPrefix(c.want, "mat_vec_rows") {
			cols := uint32(1)
			if strings.HasPrefix(c.want, "mat_vec_rows_mma") {
				cols = uint32(c.m+15) / 16
			}
			require.Equal(t, [3]uint32{576 / 8 * cols, c.gy, 1}, lns[0].Groups, "%+v", c)
			threads := uint32(128)
			if strings.HasPrefix(c.want, "mat_vec_rows_mma") {
				threads = 256
			}
			require.Equal(t, [3]uint32{threads, 1, 1}, lns[0].Threads, "%+v", c)
			rp, err := RepackedFunction(c.want)
			require.NoError(t, err)
			require.Equal(t, c.want+"_rp", rp)
		}
	}

	// with them (its default for q4_0; q8_0 by MatVecQ8KQ8_0): from
	// MatVecQ8K wide, one aligned activation row; 2 rows a warp, 4 warps,
	// one activation row a group; x' quantized once by a pre-pass
	// (MatVecQ8PreK: the cuda family's from MatVecQ8K), a warp a 32-block,
	// 8 a group, the scratch shared; the product at 2 rows a warp only
	// (q8pRows)
	for typ, want := range map[ggml.Type]string{ggml.Q8_0: "mat_vec_q8_0_q8p", ggml.Q4_0: "mat_vec_q4_0_q8p"} {
		d = plan.RMSNormMatVecArgs{Type: typ, N: 3072, K: 2048, M: 1, Ldx: 2048}.Dispatch()
		lns, err = LaunchFor(&d, &cuda, nil)
		require.NoError(t, err)
		require.Len(t, lns, 2, "%s", typ)
		require.Equal(t, Launch{Function: "rms_norm_quantize_q8x", Groups: [3]uint32{8, 1, 1}, Threads: [3]uint32{256, 1, 1},
			Scratch: 16 + 2048 + 12*64}, lns[0], "%s", typ)
		require.Equal(t, want, lns[1].Function, "%s", typ)
		require.Equal(t, lns[0].Scratch, lns[1].Scratch)
		require.Equal(t, [3]uint32{3072 / 8, 1, 1}, lns[1].Groups, "the q8x geometry (2 rows a warp, 4 warps)")
		cudaR4 := cuda
		cudaR4.MatVecQ8Rows = 4
		lns, err = LaunchFor(&d, &cudaR4, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"rms_norm_mat_vec_" + typeSuffix[typ] + "_q8x"}, []string{lns[0].Function}, "4 rows a warp: in-kernel")
	}
	for _, c := range []struct {
		kern plan.Kernel
		pre  string
	}{{plan.MatVec, "quantize_q8x"}, {plan.SiLUMulMatVec, "silu_mul_quantize_q8x"}, {plan.GELUMulMatVec, "gelu_mul_quantize_q8x"}} {
		d = plan.MatVecArgs{Type: ggml.Q4_0, N: 2048, K: 8192, M: 1, Ldx: 8192}.Dispatch()
		d.Kernel = c.kern
		lns, err = LaunchFor(&d, &cuda, nil)
		require.NoError(t, err)
		require.Equal(t, []string{c.pre, "mat_vec_q4_0_q8p"}, []string{lns[0].Function, lns[1].Function}, "%s", c.kern)
		require.Equal(t, uint32(32), lns[0].Groups[0], "%s: 256 blocks", c.kern)
	}
	cudaIn, err := Override(cuda, fmt.Sprintf("MatVecQ8PreK=%d", MatVecQ8Off))
	require.NoError(t, err)
	d = plan.RMSNormMatVecArgs{Type: ggml.Q4_0, N: 3072, K: 2048, M: 1, Ldx: 2048}.Dispatch()
	lns, err = LaunchFor(&d, &cudaIn, nil)
	require.NoError(t, err)
	require.Len(t, lns, 1)
	require.Equal(t, "rms_norm_mat_vec_q4_0_q8x", lns[0].Function, "x' quantized in every threadgroup")
	cudaQ8, err := Override(cuda, fmt.Sprintf("MatVecQ8KQ8_0=%d", cuda.MatVecQ8K))
	require.NoError(t, err)
	for _, c := range []struct {
		typ  ggml.Type
		k, m int
		want string
	}{{ggml.Q8_0, 2048, 1, "mat_vec_q8_0_q8p"}, {ggml.Q4_0, 8192, 1, "mat_vec_q4_0_q8p"},
		{ggml.Q8_0, 2016, 1, "rms_norm_mat_vec_q8_0"}, {ggml.Q8_0, 2048, 2, "rms_norm_mat_vec_q8_0"},
		{ggml.Q8_0, MatVecQ8MaxK + 32, 1, "rms_norm_mat_vec_q8_0"}, {ggml.F16, 2048, 1, "rms_norm_mat_vec_f16_a16"}} {
		d = plan.RMSNormMatVecArgs{Type: c.typ, N: 3072, K: c.k, M: c.m, Ldx: c.k}.Dispatch()
		lns, err = LaunchFor(&d, &cudaQ8, nil)
		require.NoError(t, err)
		require.Equal(t, c.want, lns[len(lns)-1].Function, "%s k=%d m=%d", c.typ, c.k, c.m)
		if strings.HasSuffix(c.want, "_q8x") { // from MatVecQ8LongK wide: 8 warps
			rows, threads := uint32(8), uint32(128)
			if c.k >= MatVecQ8LongK {
				rows, threads = 16, 256
			}
			require.Equal(t, Launch{Function: c.want, Groups: [3]uint32{3072 / rows, 1, 1}, Threads: [3]uint32{threads, 1, 1},
				Constants: []Constant{{fcMatVecRows, 2}, {fcMatVecBatch, 1}, {fcMatVecXAlign, 1}}}, lns[0])
		}
	}

	// where the GPU's size is known (an H200's 132 multiprocessors): the
	// grid capped at MatVecQ8Groups (2) threadgroups a multiprocessor,
	// each looping over row sets (the output product's 6,144 and Q|K|V's
	// 384 on 264; a small product's 25 as they are); from MatVecQ8LongK
	// wide 8 warps and MatVecQ8GroupsLong (1) a multiprocessor (the down
	// product's 128 row sets of 16 as they are, 4096 of them on 132)
	h200 := cudaIn // (x' quantized in-kernel: one launch; the pre-pass keeps the same product geometry)
	h200.Cores = 132
	for _, c := range []struct{ n, k, groups, threads uint32 }{{49152, 2048, 264, 128}, {3072, 2048, 264, 128},
		{2048, 8192, 128, 256}, {65536, 4096, 132, 256}, {2048, 4064, 256, 128}, {200, 2048, 25, 128}} {
		d = plan.SiLUMulMatVecArgs{Type: ggml.Q4_0, N: int(c.n), K: int(c.k), M: 1, Ldg: int(c.k), Ldu: int(c.k)}.Dispatch()
		lns, err = LaunchFor(&d, &h200, nil)
		require.NoError(t, err)
		require.Equal(t, Launch{Function: "silu_mul_mat_vec_q4_0_q8x", Groups: [3]uint32{c.groups, 1, 1}, Threads: [3]uint32{c.threads, 1, 1},
			Constants: []Constant{{fcMatVecRows, 2}, {fcMatVecBatch, 1}, {fcMatVecXAlign, 1}}}, lns[0], "n=%d k=%d", c.n, c.k)
	}

	// with the pre-pass (the cuda family's default): the products narrower
	// than MatVecQ8LongK capped at MatVecQ8GroupsPre (4) a multiprocessor
	// instead (mat_vec_q8p's 127 registers: four threadgroups of 4 warps
	// fit), the long ones still at MatVecQ8GroupsLong; the override puts
	// round 17's 2 back
	h200pre := cuda
	h200pre.Cores = 132
	h200pre2, err := Override(h200pre, "MatVecQ8GroupsPre=2")
	require.NoError(t, err)
	for _, c := range []struct{ n, k, groups, groups2, threads uint32 }{{49152, 2048, 528, 264, 128}, {16384, 2048, 528, 264, 128},
		{3072, 2048, 384, 264, 128}, {2048, 8192, 128, 128, 256}, {65536, 4096, 132, 132, 256}, {200, 2048, 25, 25, 128}} {
		d = plan.SiLUMulMatVecArgs{Type: ggml.Q4_0, N: int(c.n), K: int(c.k), M: 1, Ldg: int(c.k), Ldu: int(c.k)}.Dispatch()
		for _, tc := range []struct {
			tn     *Tuning
			groups uint32
		}{{&h200pre, c.groups}, {&h200pre2, c.groups2}} {
			lns, err = LaunchFor(&d, tc.tn, nil)
			require.NoError(t, err)
			require.Len(t, lns, 2)
			require.Equal(t, Launch{Function: "mat_vec_q4_0_q8p", Groups: [3]uint32{tc.groups, 1, 1}, Threads: [3]uint32{c.threads, 1, 1},
				Constants: []Constant{{fcMatVecRows, 2}, {fcMatVecBatch, 1}, {fcMatVecXAlign, 1}}, Scratch: q8pScratch(c.k)}, lns[1],
				"%s n=%d k=%d", tc.tn.Family, c.n, c.k)
		}
	}

	d = plan.SiLUMulMatVecArgs{Type: ggml.F16, N: 10, K: 37, M: 1}.Dispatch()
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, "silu_mul_mat_vec_f16", lns[0].Function)

	d = plan.MatMulArgs{Type: ggml.IQ4_NL, N: 65, K: 64, M: 33}.Dispatch()
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "mat_mul_iq4_nl", Groups: [3]uint32{2, 2, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])

	// Whisper's first convolution: 80 mel channels, 3000 frames, kw 3, pad 1
	d = plan.Conv1DArgs{Type: ggml.F16, Cin: 80, Cout: 384, T: 3000, Kw: 3, Stride: 1, Pad: 1, Flags: plan.FlagChannelMaj, Ldx: 3000, Ldo: 384}.Dispatch()
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "conv1d_f16", Groups: [3]uint32{6, 94, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])

	d = plan.EmbedArgs{Type: ggml.Q6_K, Add: plan.None, Dim: 768, N: 5, Ldo: 768}.Dispatch()
	lns, err = LaunchFor(&d, &Tuning{MaxThreads: 1024}, nil) // zero knobs: defaults
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "embed_q6_k", Groups: [3]uint32{5, 1, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])
}

func TestMatrixLaunchEmpty(t *testing.T) {
	for _, d := range []plan.Dispatch{
		plan.MatVecArgs{Type: ggml.F32, K: 16, M: 1}.Dispatch(),
		plan.MatMulArgs{Type: ggml.Q8_0, N: 16, K: 32}.Dispatch(),
		plan.EmbedArgs{Type: ggml.Q8_0, Add: plan.None, Dim: 32}.Dispatch(),
	} {
		lns, err := LaunchFor(&d, &Default, nil)
		require.NoError(t, err, d.Kernel)
		require.Empty(t, lns, d.Kernel)
	}
}

func TestMatrixLaunchErrors(t *testing.T) {
	for _, tc := range []struct {
		d    plan.Dispatch
		want string
	}{
		{plan.MatVecArgs{Type: ggml.Q8_1, N: 4, K: 32, M: 1}.Dispatch(), "not supported"},
		{plan.MatMulArgs{Type: ggml.Type(999), N: 4, K: 32, M: 1}.Dispatch(), "not supported"},
		{plan.MatVecArgs{Type: ggml.Q4_K, N: 4, K: 128, M: 1}.Dispatch(), "block size 256"},
		{plan.RMSNormMatVecArgs{Type: ggml.F32, N: 4, M: 1}.Dispatch(), "positive multiple"},
		{plan.EmbedArgs{Type: ggml.Q4_0, Add: plan.None, Dim: 33, N: 2}.Dispatch(), "block size 32"},
		{plan.Conv1DArgs{Type: ggml.F16, Cout: 4, T: 10, Kw: 3, Stride: 1, Pad: 1}.Dispatch(), "empty convolution"},
		{plan.Conv1DArgs{Type: ggml.F16, Cin: 4, Cout: 4, T: 10, Kw: 3, Pad: 1}.Dispatch(), "empty convolution"},
		{plan.Conv1DArgs{Type: ggml.F16, Cin: 4, Cout: 4, T: 1, Kw: 5, Stride: 1, Pad: 1}.Dispatch(), "does not fit"},
		{plan.Conv1DArgs{Type: ggml.Q8_0, Cin: 5, Cout: 4, T: 10, Kw: 3, Stride: 1, Pad: 1}.Dispatch(), "block size 32"},
	} {
		_, err := LaunchFor(&tc.d, &Default, nil)
		require.ErrorContains(t, err, tc.want, "%s %s", tc.d.Kernel, tc.d.Type)
	}
}

func TestMatrixLaunchNoAlloc(t *testing.T) {
	dst := make([]Launch, 0, 4)
	ds := []plan.Dispatch{
		plan.MatVecArgs{Type: ggml.Q4_0, N: 4096, K: 4096, M: 1}.Dispatch(),
		plan.MatMulArgs{Type: ggml.F16, N: 384, K: 384, M: 1500}.Dispatch(),
		plan.EmbedArgs{Type: ggml.Q8_0, Add: plan.None, Dim: 4096, N: 1}.Dispatch(),
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range ds {
			dst, _ = LaunchFor(&ds[i], &Default, dst[:0])
		}
	})
	require.Zero(t, allocs)
}

func TestMatrixKernelsRegistered(t *testing.T) {
	missing := map[plan.Kernel]bool{}
	for _, k := range Missing() {
		missing[k] = true
	}
	for _, k := range matrixKernels {
		require.False(t, missing[k], k)
	}
}

// With Tuning.MatMulMMA (the CUDA host on sm_80+), mat_mul of f16, q8_0
// and q4_0 weights from that many rows launches the tensor-core variant
// on mat_mul's grid; fewer rows, other types and every Metal family keep
// mat_mul_<type>. conv1d likewise from that many output steps.
func TestMatMulMMALaunch(t *testing.T) {
	mma := TuningFor("cuda")
	mma.MatMulMMA = MatMulMMARows
	for _, c := range []struct {
		typ  ggml.Type
		m    int
		tune Tuning
		want string
	}{
		{ggml.F16, 16, mma, "mat_mul_mma_f16"},
		{ggml.F16, 15, mma, "mat_mul_f16"},
		{ggml.BF16, 16, mma, "mat_mul_mma_bf16"},
		{ggml.BF16, 15, mma, "mat_mul_bf16"},
		{ggml.Q8_0, 512, mma, "mat_mul_mma_q8_0"},
		{ggml.Q4_0, 17, mma, "mat_mul_mma_q4_0"},
		{ggml.Q5_0, 512, mma, "mat_mul_q5_0"},
		{ggml.F32, 512, mma, "mat_mul_f32"},
		{ggml.F16, 512, TuningFor("cuda"), "mat_mul_f16"},
		{ggml.Q8_0, 512, Default, "mat_mul_q8_0"},
	} {
		d := plan.MatMulArgs{Type: c.typ, N: 65, K: 96, M: c.m}.Dispatch()
		lns, err := LaunchFor(&d, &c.tune, nil)
		require.NoError(t, err)
		require.Equal(t, []Launch{{Function: c.want, Groups: [3]uint32{2, uint32(c.m+31) / 32, 1}, Threads: [3]uint32{mmThreads, 1, 1}}}, lns, "%s m=%d", c.typ, c.m)
	}
	for _, f := range Families {
		require.Zero(t, TuningFor(f.Family).MatMulMMA, f.Family)
	}
	// With Tuning.MatMulBig, f16 products of that many 128×128 tiles
	// launch mat_mul_big_f16 on that grid (mat_mul_big_f16_h with
	// MatMulBigHalf, mat_mul_wgmma_f16 from MatMulWGMMA tiles), or
	// without a native module their twins mat_mul_t128_*; fewer tiles,
	// other types and m below MatMulMMA keep the 32×64 kernels.
	big := mma
	big.MatMulBig = MatMulBigTiles
	half := big
	half.MatMulBigHalf = 1
	wg, wg100 := big, big
	wg.MatMulWGMMA, wg100.MatMulWGMMA = 1, 100
	twin, twinHalf, twinWG := big, half, wg
	twin.MatMulMMA, twinHalf.MatMulMMA, twinWG.MatMulMMA = 0, 0, 0
	for _, c := range []struct {
		typ     ggml.Type
		n, m    int
		tune    Tuning
		want    string
		threads uint32
		bn, bm  uint32
	}{
		{ggml.F16, 4096, 512, big, "mat_mul_big_f16", bigThreads, bigBN, bigBM},
		{ggml.F16, 4096, 512, half, "mat_mul_big_f16_h", bigThreads, bigBN, bigBM},
		{ggml.F16, 4000, 300, big, "mat_mul_big_f16", bigThreads, bigBN, bigBM}, // 32×3 = 96 tiles
		{ggml.F16, 4096, 512, wg, "mat_mul_wgmma_f16", wgmmaThreads, bigBN, bigBM},
		{ggml.F16, 4000, 300, wg100, "mat_mul_big_f16", bigThreads, bigBN, bigBM}, // 96 tiles, below MatMulWGMMA
		{ggml.F16, 1536, 512, wg, "mat_mul_mma_f16", mmThreads, mmBN, mmBM},       // below MatMulBig
		{ggml.F16, 1536, 512, big, "mat_mul_mma_f16", mmThreads, mmBN, mmBM},      // 12×4 = 48 tiles
		{ggml.F16, 4096, 512, mma, "mat_mul_mma_f16", mmThreads, mmBN, mmBM},      // MatMulBig unset
		{ggml.Q8_0, 4096, 512, big, "mat_mul_mma_q8_0", mmThreads, mmBN, mmBM},    // f16 only
		{ggml.F16, 1 << 20, 15, big, "mat_mul_f16", mmThreads, mmBN, mmBM},        // below MatMulMMA
		// no native module (MatMulMMA unset: the executor): the MSL
		// twins, from MatMulMMARows rows
		{ggml.F16, 4096, 512, twin, "mat_mul_t128_f16", bigThreads, bigBN, bigBM},
		{ggml.F16, 4096, 512, twinHalf, "mat_mul_t128_f16_h", bigThreads, bigBN, bigBM},
		{ggml.F16, 4096, 512, twinWG, "mat_mul_t128_wg_f16", bigThreads, bigBN, bigBM},
		{ggml.F16, 1536, 512, twin, "mat_mul_f16", mmThreads, mmBN, mmBM},   // below MatMulBig
		{ggml.F16, 1 << 20, 15, twin, "mat_mul_f16", mmThreads, mmBN, mmBM}, // below MatMulMMARows
		{ggml.Q8_0, 4096, 512, twin, "mat_mul_q8_0", mmThreads, mmBN, mmBM}, // f16 only
	} {
		d := plan.MatMulArgs{Type: c.typ, N: c.n, K: 4096, M: c.m}.Dispatch()
		lns, err := LaunchFor(&d, &c.tune, nil)
		require.NoError(t, err)
		g := [3]uint32{(uint32(c.n) + c.bn - 1) / c.bn, (uint32(c.m) + c.bm - 1) / c.bm, 1}
		var smem uint32
		switch c.want {
		case "mat_mul_big_f16":
			smem = 128 << 10
		case "mat_mul_big_f16_h":
			smem = 112 << 10
		case "mat_mul_wgmma_f16":
			smem = 193 << 10 // 6 × 32 KB + 1 KB
		case "mat_mul_t128_f16":
			smem = 24 << 10 // weights, activations hi and lo: 128 × 32 halves each
		case "mat_mul_t128_f16_h":
			smem = 16 << 10
		case "mat_mul_t128_wg_f16":
			smem = 32 << 10 // 128 × 64 halves each
		}
		require.Equal(t, []Launch{{Function: c.want, Groups: g, Threads: [3]uint32{c.threads, 1, 1}, Threadgroup: smem}}, lns, "%s n=%d m=%d", c.typ, c.n, c.m)
	}
	// conv1d the same way, by output steps (Whisper's conv2: 3000 frames,
	// stride 2, 1500 steps; 29 frames give 15 steps)
	for _, c := range []struct {
		typ  ggml.Type
		T    int
		tune Tuning
		want string
	}{
		{ggml.F16, 3000, mma, "conv1d_mma_f16"},
		{ggml.F16, 31, mma, "conv1d_mma_f16"},
		{ggml.F16, 29, mma, "conv1d_f16"},
		{ggml.Q8_0, 3000, mma, "conv1d_mma_q8_0"},
		{ggml.Q4_0, 3000, mma, "conv1d_mma_q4_0"},
		{ggml.F32, 3000, mma, "conv1d_f32"},
		{ggml.F16, 3000, TuningFor("cuda"), "conv1d_f16"},
	} {
		d := plan.Conv1DArgs{Type: c.typ, Cin: 384, Cout: 384, T: c.T, Kw: 3, Stride: 2, Pad: 1, Ldx: 384, Ldo: 384}.Dispatch()
		lns, err := LaunchFor(&d, &c.tune, nil)
		require.NoError(t, err)
		tout := uint32(c.T+2-3)/2 + 1
		require.Equal(t, []Launch{{Function: c.want, Groups: [3]uint32{6, (tout + 31) / 32, 1}, Threads: [3]uint32{mmThreads, 1, 1}}}, lns, "%s T=%d", c.typ, c.T)
	}
}

// TestMatVecAligned16Launch: f16 mat-vecs take the "_a16" instances only
// where the host promises aligned buffers (the cuda family) and the
// binding's offset and row width keep rows 16-byte aligned; every other
// case keeps the element-aligned instance.
func TestMatVecAligned16Launch(t *testing.T) {
	cuda := TuningFor("cuda")
	require.Equal(t, uint32(Aligned16), cuda.Align16)
	require.Equal(t, uint32(1), Default.Align16)
	forms := map[plan.Kernel]plan.Dispatch{
		plan.MatVec:        plan.MatVecArgs{Type: ggml.F16, W: plan.Binding{Off: 32}, N: 29, K: 576, M: 1}.Dispatch(),
		plan.RMSNormMatVec: plan.RMSNormMatVecArgs{Type: ggml.F16, N: 29, K: 576, M: 1}.Dispatch(),
		plan.SiLUMulMatVec: plan.SiLUMulMatVecArgs{Type: ggml.F16, N: 29, K: 1536, M: 3}.Dispatch(),
		plan.GELUMulMatVec: plan.GELUMulMatVecArgs{Type: ggml.F16, N: 29, K: 160, M: 1}.Dispatch(),
	}
	for kern, d := range forms {
		lns, err := LaunchFor(&d, &cuda, nil)
		require.NoError(t, err)
		require.Equal(t, kern.String()+"_f16_a16", lns[0].Function)
		lns, err = LaunchFor(&d, &Default, nil)
		require.NoError(t, err)
		require.Equal(t, kern.String()+"_f16", lns[0].Function, "no promise")
	}
	for name, d := range map[string]plan.Dispatch{
		"offset 8":  plan.MatVecArgs{Type: ggml.F16, W: plan.Binding{Off: 8}, N: 29, K: 576, M: 1}.Dispatch(),
		"k=168":     plan.MatVecArgs{Type: ggml.F16, N: 29, K: 168, M: 1}.Dispatch(),
		"f32 rows":  plan.MatVecArgs{Type: ggml.F32, N: 29, K: 576, M: 1}.Dispatch(),
		"bf16 rows": plan.MatVecArgs{Type: ggml.BF16, N: 29, K: 576, M: 1}.Dispatch(),
	} {
		lns, err := LaunchFor(&d, &cuda, nil)
		require.NoError(t, err)
		require.NotContains(t, lns[0].Function, "_a16", name)
	}
}

// TestMatVecAlignedInputsLaunch: function constant 22 (activations loaded
// 16 bytes at a time) is 1 only under the host's promise, with aligned
// binding offsets, row strides that keep rows aligned (or one row) and
// whole 16-element chunks; for every weight type.
func TestMatVecAlignedInputsLaunch(t *testing.T) {
	cuda := TuningFor("cuda")
	xa := func(d plan.Dispatch, tun *Tuning) uint32 {
		lns, err := LaunchFor(&d, tun, nil)
		require.NoError(t, err)
		for _, c := range lns[0].Constants {
			if c.Index == fcMatVecXAlign {
				return c.Value
			}
		}
		t.Fatal("no constant 22")
		return 0
	}
	up := plan.Binding{Off: 4 * 1536}
	for name, c := range map[string]struct {
		d    plan.Dispatch
		want uint32
	}{
		"q8_0 decode":         {plan.RMSNormMatVecArgs{Type: ggml.Q8_0, N: 960, K: 576, M: 1, Ldx: 577}.Dispatch(), 1},
		"q4_0 gated":          {plan.SiLUMulMatVecArgs{Type: ggml.Q4_0, N: 576, K: 1536, M: 1, Up: up, Ldg: 3072, Ldu: 3072}.Dispatch(), 1},
		"f16 beams":           {plan.MatVecArgs{Type: ggml.F16, N: 384, K: 384, M: 5, Ldx: 384}.Dispatch(), 1},
		"beams, odd stride":   {plan.MatVecArgs{Type: ggml.Q8_0, N: 384, K: 384, M: 5, Ldx: 386}.Dispatch(), 0},
		"x at 8 bytes":        {plan.MatVecArgs{Type: ggml.Q8_0, X: plan.Binding{Off: 8}, N: 384, K: 384, M: 1}.Dispatch(), 0},
		"g at 4 bytes":        {plan.RMSNormMatVecArgs{Type: ggml.Q8_0, G: plan.Binding{Off: 4}, N: 384, K: 384, M: 1}.Dispatch(), 0},
		"up at 8 bytes":       {plan.SiLUMulMatVecArgs{Type: ggml.Q8_0, Up: plan.Binding{Off: 8}, N: 384, K: 384, M: 1}.Dispatch(), 0},
		"gated rows, odd ldu": {plan.GELUMulMatVecArgs{Type: ggml.Q8_0, N: 384, K: 384, M: 2, Ldg: 384, Ldu: 390}.Dispatch(), 0},
		"k = 40":              {plan.MatVecArgs{Type: ggml.F32, N: 29, K: 40, M: 1}.Dispatch(), 0},
	} {
		require.Equal(t, c.want, xa(c.d, &cuda), name)
		require.Zero(t, xa(c.d, &Default), "%s: no promise", name)
	}
}

// With Tuning.MatMulMMQ, mat_mul of q8_0, q4_0 and q5_0 weights from that
// many rows is two launches on one scratch: quantize_q8a over the rows
// rounded up to 64, then the int8 product on 64×128 tiles, native with
// MatMulMMA (the sm_80 module), else the MSL twin; other types, fewer
// rows and no MatMulMMQ keep mat_mul / mat_mul_mma. Repacked weights
// rename the product, not the quantization.
func TestMatMulQ8ALaunch(t *testing.T) {
	cu := TuningFor("cuda")
	cu.MatMulMMA, cu.MatMulMMQ = MatMulMMARows, MatMulMMQRows
	twin := Default
	twin.MatMulMMQ = 16
	for _, c := range []struct {
		typ     ggml.Type
		n, k, m int
		tune    Tuning
		want    string
	}{
		{ggml.Q8_0, 300, 96, MatMulMMQRows, cu, "mat_mul_mmq_q8_0"},
		{ggml.Q4_0, 65, 2048, 1000, cu, "mat_mul_mmq_q4_0"},
		{ggml.Q5_0, 129, 64, MatMulMMQRows + 100, cu, "mat_mul_mmq_q5_0"},
		{ggml.Q5_0, 129, 64, 17, twin, "mat_mul_q8a_q5_0"},
	} {
		d := plan.MatMulArgs{Type: c.typ, N: c.n, K: c.k, M: c.m}.Dispatch()
		lns, err := LaunchFor(&d, &c.tune, nil)
		require.NoError(t, err)
		mp := uint32(c.m+63) / 64 * 64
		scratch := mp*uint32(c.k) + 4*uint32(c.k/32)*mp
		require.Equal(t, []Launch{
			{Function: "quantize_q8a", Groups: [3]uint32{uint32(c.k/32+7) / 8, mp, 1}, Threads: [3]uint32{256, 1, 1}, Scratch: scratch},
			{Function: c.want, Groups: [3]uint32{uint32(c.n+127) / 128, mp / 64, 1}, Threads: [3]uint32{256, 1, 1}, Scratch: scratch},
		}, lns, "%s m=%d", c.typ, c.m)
		rp := lns[1].Function + "_rp"
		if c.typ == ggml.Q5_0 {
			continue
		}
		require.NoError(t, ForLayouts([]Layout{{Type: c.typ, K: c.k}}, &d, lns))
		require.Equal(t, []string{"quantize_q8a", rp}, []string{lns[0].Function, lns[1].Function})
	}
	for _, c := range []struct {
		typ  ggml.Type
		m    int
		tune Tuning
		want string
	}{
		{ggml.Q8_0, MatMulMMQRows - 1, cu, "mat_mul_mma_q8_0"},
		{ggml.Q4_K, 512, cu, "mat_mul_q4_k"},
		{ggml.Q8_0, 512, TuningFor("cuda"), "mat_mul_q8_0"},
	} {
		d := plan.MatMulArgs{Type: c.typ, N: 65, K: 256, M: c.m}.Dispatch()
		lns, err := LaunchFor(&d, &c.tune, nil)
		require.NoError(t, err)
		require.Len(t, lns, 1)
		require.Equal(t, c.want, lns[0].Function, "%s m=%d", c.typ, c.m)
	}
	for _, f := range Families {
		require.Zero(t, TuningFor(f.Family).MatMulMMQ, f.Family)
	}
}

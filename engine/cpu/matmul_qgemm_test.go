package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

// qgemmTestKernel is a kernel and the largest weight code it takes.
type qgemmTestKernel struct {
	k       qgemmTileFunc
	maxCode int
}

// qgemmKernels lists the quantized GEMM kernels this CPU can run, with the
// largest code each takes.
func qgemmKernels() map[string]qgemmTestKernel {
	ks := map[string]qgemmTestKernel{"generic": {qgemmGeneric, 255}}
	addSIMDKernels(ks)
	return ks
}

// Every quantized GEMM kernel against the float64 reference, with tile
// edges in both directions: n and m not multiples of the 16×8 tile, k a
// multiple of 32 only, strides, bias and residual (aliased or not).
func TestQGemmKernels(t *testing.T) {
	saved, savedAccel := qgemmKernel, qgemmAccel
	defer func() { qgemmKernel, qgemmAccel = saved, savedAccel }()
	qgemmAccel = nil
	cases := []mulCase{
		{n: 1, k: 32, m: 16},
		{n: 16, k: 64, m: 8 + 16},
		{n: 17, k: 96, m: 17, bias: true},
		{n: 45, k: 608, m: 31, ldxPad: 3, ldoPad: 2, bias: true, res: true},
		{n: 33, k: 160, m: 19, res: true, alias: true, ldoPad: 1},
		{n: 70, k: 256, m: 64, bias: true, res: true, alias: true},
	}
	for name, k := range qgemmKernels() {
		qgemmKernel = k.k
		r := rand.New(rand.NewPCG(5, 13))
		for _, workers := range []int{1, 3, 7} {
			p := NewPool(workers)
			mm := NewMatMul(p)
			mm.qgemm = qgemmOn
			for typ, dec := range panelDecoders {
				if dec.maxCode > k.maxCode {
					continue
				}
				for _, c := range cases {
					t.Run(name+"/"+typ.String(), func(t *testing.T) { checkMul(t, mm, r, typ, c) })
				}
			}
			p.Close()
		}
	}
}

// The kernels agree with each other bit-for-bit up to float rounding on
// the same quantized inputs, so a SIMD layout error cannot hide inside the
// reference tolerance.
func TestQGemmKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 2))
	for name, k := range qgemmKernels() {
		for _, nb := range []int{1, 2, 7, 19} {
			panel := make([]byte, nb*qPanelBlock)
			act := make([]byte, nb*qTileRows*qActBlock)
			randQTiles(r, panel, act, k.maxCode)
			var want, got [qTileRows * qTileCols]float32
			qgemmGeneric(panel, act, nb, &want)
			k.k(panel, act, nb, &got)
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-4*(1+float64(abs32(want[i]))), "%s nb=%d out[%d]", name, nb, i)
			}
		}
	}
}

// Odd row counts and K multiples of 32 reach every packing edge of the
// allocation-free claim too.
func TestQGemmNoAllocAfterWarmup(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	mm := NewMatMul(pool)
	mm.qgemm = qgemmOn
	r := rand.New(rand.NewPCG(2, 2))
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		n, k, m := 53, 96, 37
		w := randWeights(r, typ, n, k)
		x := randF32(r, m*k)
		out := make([]float32, m*n)
		run := func() { require.NoError(t, mm.Mul(typ, w, n, k, m, x, k, out, n, nil, out, n)) }
		run()
		require.Zero(t, testing.AllocsPerRun(5, run), "%s", typ)
	}
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// BenchmarkQGemmAB: SmolLM2-135M's prefill shapes (n×k, 512 tokens), the
// quantized GEMM with each SIMD kernel this CPU runs against the path it
// replaces ("old": sgemm on dequantized tiles where a BLAS is loaded),
// alternated in one process.
func BenchmarkQGemmAB(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	saved, savedAccel := qgemmKernel, qgemmAccel
	defer func() { qgemmKernel, qgemmAccel = saved, savedAccel }()
	qgemmAccel = nil
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		for _, s := range [][2]int{{576, 576}, {192, 576}, {1536, 576}, {576, 1536}} {
			mm := NewMatMul(pool)
			mm.qgemm = qgemmOff
			b.Run(fmt.Sprintf("%s/%dx%dx512/old", typ, s[0], s[1]), func(b *testing.B) { benchMul(b, mm, typ, s[0], s[1], 512) })
			for name, k := range qgemmKernels() {
				if name == "generic" || k.maxCode < panelDecoders[typ].maxCode {
					continue
				}
				qgemmKernel = k.k
				mm := NewMatMul(pool)
				mm.qgemm = qgemmOn
				b.Run(fmt.Sprintf("%s/%dx%dx512/%s", typ, s[0], s[1], name), func(b *testing.B) { benchMul(b, mm, typ, s[0], s[1], 512) })
			}
		}
	}
}

func TestQGemmQuantizers(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 8))
	const nb, rows = 5, 11
	x := randF32(r, rows*nb*32)
	clear(x[2*nb*32+64 : 2*nb*32+96]) // row 2, block 2 all zero
	for i := range x[:32] {
		x[i] *= 1e-3
	}
	groups := (rows + qTileRows - 1) / qTileRows
	want := make([]byte, groups*nb*qTileRows*qActBlock)
	got := make([]byte, len(want))
	for i := 0; i < rows; i++ {
		quantizeRowQ(x[i*nb*32:(i+1)*nb*32], i, nb, 8, want)
		qquantRow(x[i*nb*32:(i+1)*nb*32], i, nb, 8, got)
	}
	for blk := 0; blk < len(want)/qActBlock; blk++ {
		w, g := want[blk*qActBlock:][:qActBlock], got[blk*qActBlock:][:qActBlock]
		var sum int32
		for e := 0; e < 32; e++ {
			require.InDelta(t, int8(w[e]), int8(g[e]), 1, "block %d code %d", blk, e)
			sum += int32(int8(g[e]))
		}
		require.InDelta(t, math.Float32frombits(binary.LittleEndian.Uint32(w[32:])),
			math.Float32frombits(binary.LittleEndian.Uint32(g[32:])), 1e-7, "block %d scale", blk)
		require.Equal(t, -8*sum, int32(binary.LittleEndian.Uint32(g[36:])), "block %d correction", blk)
	}
	require.Equal(t, make([]byte, qActBlock), got[(2*qTileRows+2)*qActBlock:][:qActBlock], "zero block")
}

// The path choice: only types whose codes the installed kernel takes, a
// kernel not preferred to sgemm only where no BLAS is loaded, and never
// below qgemmMinM rows.
func TestQGemmPathChoice(t *testing.T) {
	savedMax, savedOver := qgemmMaxCode, qgemmOverBLAS
	defer func() { qgemmMaxCode, qgemmOverBLAS = savedMax, savedOver }()
	mm := NewMatMul(nil)
	args := func(typ ggml.Type, m int) *mulArgs { return &mulArgs{kd: kinds[typ], k: 64, m: m} }
	qgemmMaxCode, qgemmOverBLAS = 31, false // the AVX2 kernel
	for _, noBLAS := range []bool{true, false} {
		mm.noBLAS = noBLAS
		want := noBLAS || !blas.Available()
		require.Equal(t, want, mm.canQGemm(args(ggml.Q4_0, 64)), "q4_0 noBLAS=%v", noBLAS)
		require.Equal(t, want, mm.canQGemm(args(ggml.Q5_0, 64)), "q5_0 noBLAS=%v", noBLAS)
		require.False(t, mm.canQGemm(args(ggml.Q8_0, 64)), "q8_0 noBLAS=%v", noBLAS)
	}
	qgemmMaxCode, qgemmOverBLAS = 255, true // the VNNI kernel
	mm.noBLAS = false
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0, ggml.IQ4_NL} {
		require.True(t, mm.canQGemm(args(typ, qgemmMinM)), "%s", typ)
		require.False(t, mm.canQGemm(args(typ, qgemmMinM-1)), "%s below qgemmMinM", typ)
	}
	require.False(t, mm.canQGemm(args(ggml.Q4_K, 64)), "q4_k has no panel decoder")
	require.False(t, mm.canQGemm(args(ggml.F16, 64)), "f16 stays on sgemm")
	qgemmMaxCode = 0 // no SIMD kernel
	require.False(t, mm.canQGemm(args(ggml.Q8_0, 64)))
}

// Options.QuantGEMM: every product the quantized GEMM can take from
// qgemmMinM rows takes it, whatever the installed kernel and BLAS (the
// reference of the GPU's int8 products); codes wider than the installed
// kernel's run the portable kernel, still right against float64.
func TestQuantGEMMOption(t *testing.T) {
	savedMax, savedOver, savedK := qgemmMaxCode, qgemmOverBLAS, qgemmKernel
	defer func() { qgemmMaxCode, qgemmOverBLAS, qgemmKernel = savedMax, savedOver, savedK }()
	b := New(Options{Threads: 2, QuantGEMM: true})
	defer b.Close()
	ex, err := b.Load(&plan.Plan{Name: "quant-gemm"})
	require.NoError(t, err)
	mm := ex.(*Exec).mm
	require.NoError(t, ex.Close())
	args := func(typ ggml.Type, m int) *mulArgs { return &mulArgs{kd: kinds[typ], k: 64, m: m} }
	qgemmMaxCode, qgemmOverBLAS = 0, false // no SIMD kernel, a BLAS preferred where loaded
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		require.True(t, mm.canQGemm(args(typ, qgemmMinM)), "%s", typ)
		require.False(t, mm.canQGemm(args(typ, qgemmMinM-1)), "%s below qgemmMinM", typ)
	}
	// a kernel taking 4-bit codes only, wrong for q8_0's: not used for it
	qgemmMaxCode = 15
	qgemmKernel = func(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
		qgemmGeneric(panel, act, nb, out)
		out[0] += 1000
	}
	p := NewPool(2)
	defer p.Close()
	qm := NewMatMul(p)
	qm.qgemm, qm.quantRef = mm.qgemm, mm.quantRef
	checkMul(t, qm, rand.New(rand.NewPCG(35, 9)), ggml.Q8_0, mulCase{n: 33, k: 96, m: 17, bias: true})
}

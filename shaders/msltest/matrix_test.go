package msltest

// Tests of the matrix kernels (mat_vec, rms_norm_mat_vec, silu_mul_mat_vec,
// mat_mul, conv1d, embed) for every weight type the CPU backend supports.
// Each case runs one plan dispatch twice: through the CPU backend (cpu.New,
// the reference of the kernel contract) and through the MSL executor with
// the launches of shaders.LaunchFor. Results are checked two ways:
//
//   - against a float64 product of the ggml-dequantized weights with the
//     float activations, which is what the MSL kernels compute: a tight
//     bound (mxTight of the output's magnitude) that catches any wrong
//     element, block, stride or tail;
//   - against the CPU backend, which quantizes activations to q8_0, q8_1 or
//     q8_K before ggml's block dot products where the GPU keeps them float
//     (the deviation documented in launch_matrix.go): a per-type bound
//     (mxCPUBound) a little above the deviation measured on these inputs
//     (logged by -v).
//
// Every output buffer starts filled with a sentinel, so writes outside the
// rows and columns of the result (strided gaps) show up as errors in both
// comparisons.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// mxTight bounds |msl - exact| / max(1, max|exact|).
const mxTight = 2e-5

// mxSentinel fills output buffers before a kernel runs.
const mxSentinel = 777.0

// mxCPUBound bounds |msl - cpu| / max(1, max|cpu|) per weight type: the
// activation quantization of the CPU path (float types are not quantized,
// so they get the tight bound). Measured maxima on these cases (relative to
// the largest output, outputs of magnitude ~10-100; k = 96 for the 32-blocks,
// 512 for the K-quants):
//
//	kernel            vs exact (all types)   vs CPU, quantized types
//	mat_vec           3.2e-7                 1.3e-2
//	rms_norm_mat_vec  2.0e-7                 1.6e-2
//	silu_mul_mat_vec  2.7e-7                 2.2e-2 (q2_K)
//	mat_mul           1.1e-6                 7.4e-3 (m = 1; from m = 16 the CPU
//	                                         dequantizes too: 1.2e-6)
//	conv1d            7.2e-7                 8.3e-7 (the CPU's im2col product
//	                                         has m >= 16 rows)
//	embed             5.3e-8 (accumulate)    0 (both decode exactly)
//
// Float weight types agree with the CPU to 2.3e-7.
var mxCPUBound = map[ggml.Type]float64{
	ggml.F32: mxTight, ggml.F16: mxTight, ggml.BF16: mxTight,
	ggml.Q4_0: 4e-2, ggml.Q4_1: 4e-2, ggml.Q5_0: 4e-2, ggml.Q5_1: 4e-2, ggml.Q8_0: 4e-2,
	ggml.Q2_K: 4e-2, ggml.Q3_K: 4e-2, ggml.Q4_K: 4e-2, ggml.Q5_K: 4e-2, ggml.Q6_K: 4e-2,
	ggml.IQ4_NL: 4e-2,
}

// mxK is the row length used for type t: a few blocks, and for the float
// types a length that ends inside a 16-element chunk (the kernels' tail).
func mxK(t ggml.Type) int {
	switch t.BlockSize() {
	case 1:
		return 37
	case 32:
		return 96
	}
	return 512
}

// mxBuf is one buffer of a test case.
type mxBuf struct {
	data    []byte
	weights bool
}

// mxCase is one dispatch with its buffers; Bind[i].Buf indexes bufs.
type mxCase struct {
	d    plan.Dispatch
	bufs []mxBuf
	out  int // the buffer compared after the run
}

func (c *mxCase) add(data []byte, weights bool) plan.BufID {
	c.bufs = append(c.bufs, mxBuf{data: data, weights: weights})
	return plan.BufID(len(c.bufs) - 1)
}

func (c *mxCase) bind(i int, b plan.BufID, off uint64) {
	c.d.Bind[i] = plan.Binding{Buf: b, Off: off}
	if int(c.d.NBind) <= i {
		c.d.NBind = uint8(i + 1)
	}
}

func (c *mxCase) noBind(i int) { c.bind(i, plan.NoBuf, 0) }

func randF32(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64()) * scale
	}
	return v
}

func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// randWeights returns n rows of k random elements quantized to t, and
// their dequantized values (what the MSL kernels multiply by).
func randWeights(t *testing.T, r *rand.Rand, typ ggml.Type, n, k int) ([]byte, []float32) {
	return randWeightsK(t, r, typ, n, k)
}

func randWeightsK(t testing.TB, r *rand.Rand, typ ggml.Type, n, k int) ([]byte, []float32) {
	w := randF32(r, n*k, 1)
	rb, err := ggml.RowBytes(typ, int64(k))
	require.NoError(t, err)
	q := make([]byte, int(rb)*n)
	require.NoError(t, ggml.Quantize(typ, w, q))
	deq := make([]float32, n*k)
	require.NoError(t, ggml.Dequantize(typ, q, deq))
	return q, deq
}

// plan is c as a plan of one pass, and that pass.
func (c *mxCase) plan() (*plan.Plan, int) {
	p := &plan.Plan{Name: "matrix"}
	for i, b := range c.bufs {
		bd := plan.Buffer{Name: fmt.Sprint("b", i), Kind: plan.IO, Size: int64(len(b.data))}
		if b.weights {
			bd.Kind, bd.Data = plan.BufWeights, b.data
		}
		p.AddBuffer(bd)
	}
	ps, idx := p.AddPass("run")
	ps.Add(c.d)
	return p, idx
}

// runOn runs c on be and returns the output buffer.
func runOn(t *testing.T, be plan.Backend, c *mxCase) []float32 {
	p, idx := c.plan()
	ex, err := be.Load(p)
	require.NoError(t, err, be.Name())
	defer ex.Close()
	for i, b := range c.bufs {
		if !b.weights {
			require.NoError(t, ex.Write(plan.BufID(i), 0, b.data))
		}
	}
	require.NoError(t, ex.Run(idx, &plan.Vars{}), be.Name())
	out := make([]byte, len(c.bufs[c.out].data))
	require.NoError(t, ex.Read(plan.BufID(c.out), 0, out))
	return ggml.BytesF32(out)
}

// float64s is v widened.
func float64s(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return w
}

// relErr is max|got-want| / max(1, max|want|), the maximum of |want| taken
// over the result (sentinel gaps excluded, so they do not hide errors).
func relErr(got []float32, want []float64) float64 {
	var e, ref float64
	for i, w := range want {
		d := math.Abs(float64(got[i]) - w)
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		e = max(e, d)
		if w != mxSentinel {
			ref = max(ref, math.Abs(w))
		}
	}
	return e / max(1, ref)
}

// logOff lists where got is off want (a failure's pattern: one tile, one
// row, scattered elements), for a failure seen once in CI and not again
// (TestConv1DTensorCores, 2026-11-30).
func logOff(t *testing.T, got []float32, want []float64) {
	t.Helper()
	var ref float64
	for _, w := range want {
		if w != mxSentinel {
			ref = max(ref, math.Abs(w))
		}
	}
	n := 0
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); d/max(1, ref) > mxTight {
			if n < 16 {
				t.Logf("  element %d: got %g, want %g", i, got[i], w)
			}
			n++
		}
	}
	t.Logf("  %d of %d elements off", n, len(want))
}

// check compares the MSL result with the exact product and the CPU backend.
func check(t *testing.T, name string, typ ggml.Type, c *mxCase, exact []float64) {
	t.Helper()
	checkOn(t, TestBackend(t), name, typ, c, exact)
}

// checkOn is check on backend be.
func checkOn(t *testing.T, be plan.Backend, name string, typ ggml.Type, c *mxCase, exact []float64) {
	t.Helper()
	got := runOn(t, be, c)
	cpuOut := runOn(t, cpuShared, c)
	require.Len(t, got, len(exact))
	eExact := relErr(got, exact)
	eCPU := relErr(got, float64s(cpuOut))
	t.Logf("%-40s exact %.2e  cpu %.2e", name, eExact, eCPU)
	if eExact > mxTight {
		logOff(t, got, exact)
	}
	require.LessOrEqual(t, eExact, mxTight, "%s: MSL vs exact product", name)
	require.LessOrEqual(t, eCPU, mxCPUBound[typ], "%s: MSL vs CPU backend", name)
}

// productCase builds a MatVec/MatMul/RMSNormMatVec/LayerNormMatVec/
// SiLUMulMatVec dispatch and its exact result: n weight rows, m activation
// rows, strides ldx (also ldg), ldo, ldr, ldu; bias and res when withBR;
// res aliasing out when alias. LayerNormMatVec's x rows are off zero mean
// (its norm must take the mean off) and its norm bias is at binding 6.
func productCase(t *testing.T, r *rand.Rand, kern plan.Kernel, typ ggml.Type, n, m int, withBR, alias bool) (*mxCase, []float64) {
	return productCaseK(t, r, kern, typ, n, mxK(typ), m, withBR, alias)
}

// productCaseK is productCase with rows of k elements.
func productCaseK(t *testing.T, r *rand.Rand, kern plan.Kernel, typ ggml.Type, n, k, m int, withBR, alias bool) (*mxCase, []float64) {
	return productCaseLayout(t, r, kern, typ, n, k, m, withBR, alias, false)
}

// productCaseLayout is productCaseK; aligned puts the activations (x, and
// g or up) at offset 0 with row strides of whole 16 bytes, where the
// other cases put them at 4 and 8 bytes with odd strides (the mat-vecs'
// 16-byte activation loads, function constant 22, need the former).
func productCaseLayout(t *testing.T, r *rand.Rand, kern plan.Kernel, typ ggml.Type, n, k, m int, withBR, alias, aligned bool) (*mxCase, []float64) {
	ldx, ldo, ldr, ldu := k+3, n+5, n+2, k+7
	offX, offX2 := 1, 2 // elements
	if aligned {
		ldx, ldu, offX, offX2 = (k+3)&^3, (k+7)&^3, 0, 0
	}
	if alias {
		ldr = ldo
	}
	q, w := randWeights(t, r, typ, n, k)
	x := randF32(r, (m-1)*ldx+k+3, 1)
	if kern == plan.LayerNormMatVec { // rows off zero mean
		for i := range x {
			x[i] += 3
		}
	}
	x2 := randF32(r, max((m-1)*ldu+k, k)+2, 1)
	bias := randF32(r, n, 1)
	res := randF32(r, m*ldr, 1)
	out := filled(m*ldo, mxSentinel)
	if alias {
		for i := 0; i < m; i++ {
			copy(out[i*ldo:i*ldo+n], res[i*ldr:i*ldr+n])
		}
		res = out
	}
	const eps = 1e-5

	c := &mxCase{d: plan.Dispatch{Kernel: kern, Type: typ, Grid: [3]uint32{uint32(n), uint32(m), 1}}}
	c.bind(0, c.add(q, true), 0)
	c.bind(1, c.add(ggml.F32Bytes(x), false), uint64(4*offX)) // offset: a slice of a wider buffer
	ob := c.add(ggml.F32Bytes(out), false)
	c.bind(2, ob, 0)
	c.out = int(ob)
	c.noBind(3)
	c.noBind(4)
	if withBR {
		c.bind(3, c.add(ggml.F32Bytes(bias), false), 0)
		if alias {
			c.bind(4, ob, 0)
		} else {
			c.bind(4, c.add(ggml.F32Bytes(res), false), 0)
		}
	}
	c.d.P = plan.MatVecArgs{N: n, K: k, M: m, Ldx: ldx, Ldo: ldo, Ldr: ldr}.Dispatch().P
	switch kern {
	case plan.RMSNormMatVec:
		c.bind(5, c.add(ggml.F32Bytes(x2), false), uint64(4*offX2))
		c.d.P = plan.RMSNormMatVecArgs{N: n, K: k, M: m, Ldx: ldx, Ldo: ldo, Ldr: ldr, Eps: eps}.Dispatch().P
	case plan.SiLUMulMatVec:
		c.bind(5, c.add(ggml.F32Bytes(x2), false), uint64(4*offX2))
		c.d.P = plan.SiLUMulMatVecArgs{N: n, K: k, M: m, Ldg: ldx, Ldo: ldo, Ldr: ldr, Ldu: ldu}.Dispatch().P
	case plan.GELUMulMatVec:
		c.bind(5, c.add(ggml.F32Bytes(x2), false), uint64(4*offX2))
		c.d.P = plan.GELUMulMatVecArgs{N: n, K: k, M: m, Ldg: ldx, Ldo: ldo, Ldr: ldr, Ldu: ldu}.Dispatch().P
	}
	var x3 []float32 // LayerNormMatVec's norm bias
	if kern == plan.LayerNormMatVec {
		x3 = randF32(r, k+2, 1)
		c.bind(5, c.add(ggml.F32Bytes(x2), false), uint64(4*offX2))
		c.bind(6, c.add(ggml.F32Bytes(x3), false), uint64(4*offX2))
		c.d.P = plan.LayerNormMatVecArgs{N: n, K: k, M: m, Ldx: ldx, Ldo: ldo, Ldr: ldr, Eps: eps}.Dispatch().P
	}

	exact := make([]float64, len(out))
	for i, v := range out {
		exact[i] = float64(v)
	}
	xs := x[offX:] // binding 1 is at byte offset 4·offX
	x2s := x2[offX2:]
	xr := make([]float64, k)
	for i := 0; i < m; i++ {
		row := xs[i*ldx : i*ldx+k]
		switch kern {
		case plan.RMSNormMatVec:
			var ss float64
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(k)+eps)
			for j, v := range row {
				xr[j] = float64(v) * inv * float64(x2s[j])
			}
		case plan.LayerNormMatVec:
			var s, q float64
			for _, v := range row {
				s += float64(v)
			}
			mean := s / float64(k)
			for _, v := range row {
				q += (float64(v) - mean) * (float64(v) - mean)
			}
			inv := 1 / math.Sqrt(q/float64(k)+eps)
			for j, v := range row {
				xr[j] = (float64(v)-mean)*inv*float64(x2s[j]) + float64(x3[offX2+j])
			}
		case plan.SiLUMulMatVec:
			for j, v := range row {
				g := float64(v)
				xr[j] = g / (1 + math.Exp(-g)) * float64(x2s[i*ldu+j])
			}
		case plan.GELUMulMatVec:
			for j, v := range row {
				g := float64(v)
				xr[j] = 0.5 * g * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(g+0.044715*g*g*g))) * float64(x2s[i*ldu+j])
			}
		default:
			for j, v := range row {
				xr[j] = float64(v)
			}
		}
		for j := 0; j < n; j++ {
			var s float64
			for e := 0; e < k; e++ {
				s += xr[e] * float64(w[j*k+e])
			}
			if withBR {
				s += float64(bias[j]) + float64(res[i*ldr+j])
			}
			exact[i*ldo+j] = s
		}
	}
	return c, exact
}

func TestMatVecAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range shaders.MatrixTypes() {
		for _, tc := range []struct {
			m             int
			withBR, alias bool
		}{{1, false, false}, {3, true, false}, {10, true, true}} {
			c, exact := productCase(t, r, plan.MatVec, typ, 37, tc.m, tc.withBR, tc.alias)
			check(t, fmt.Sprintf("mat_vec %s m=%d bias/res=%v alias=%v", typ, tc.m, tc.withBR, tc.alias), typ, c, exact)
		}
	}
}

func TestFusedMatVecAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kern := range []plan.Kernel{plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.LayerNormMatVec} {
		for _, typ := range shaders.MatrixTypes() {
			if kern == plan.LayerNormMatVec && !plan.LayerNormMatVecType(typ) {
				continue
			}
			for _, tc := range []struct {
				m      int
				withBR bool
			}{{1, false}, {3, true}} {
				c, exact := productCase(t, r, kern, typ, 21, tc.m, tc.withBR, false)
				check(t, fmt.Sprintf("%s %s m=%d bias/res=%v", kern, typ, tc.m, tc.withBR), typ, c, exact)
			}
		}
	}
}

func TestMatMulAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range shaders.MatrixTypes() {
		// 70 > 64 weight rows and 45 > 32 activation rows: ragged tiles in
		// both directions
		c, exact := productCase(t, r, plan.MatMul, typ, 70, 45, typ != ggml.Q4_0, typ == ggml.F16)
		check(t, fmt.Sprintf("mat_mul %s n=70 m=45", typ), typ, c, exact)
	}
	// a single row and a single tile
	c, exact := productCase(t, r, plan.MatMul, ggml.Q8_0, 5, 1, true, false)
	check(t, "mat_mul q8_0 n=5 m=1", ggml.Q8_0, c, exact)
}

// convCase builds a Conv1D dispatch: cin·kw = 256 (whole blocks of every
// type), cout 70 (> one 64-wide tile), T 41 with stride 2 and pad 1.
func convCase(t *testing.T, r *rand.Rand, typ ggml.Type, chanMajor, withBias bool) (*mxCase, []float64) {
	return convCaseShape(t, r, typ, chanMajor, withBias, convShape{64, 4, 70, 41, 2, 1})
}

// convShape is a Conv1D geometry: cin, kw, cout, T, stride, pad.
type convShape struct{ cin, kw, cout, T, stride, pad int }

func convCaseShape(t *testing.T, r *rand.Rand, typ ggml.Type, chanMajor, withBias bool, sh convShape) (*mxCase, []float64) {
	cin, kw, cout, T, stride, pad := sh.cin, sh.kw, sh.cout, sh.T, sh.stride, sh.pad
	tout := (T+2*pad-kw)/stride + 1
	q, w := randWeights(t, r, typ, cout, cin*kw)
	xm, xn := T, cin
	if chanMajor {
		xm, xn = cin, T
	}
	ldx, ldo := xn+3, cout+6
	x := randF32(r, xm*ldx, 1)
	bias := randF32(r, cout, 1)
	out := filled(tout*ldo, mxSentinel)
	var flags uint32
	if chanMajor {
		flags = plan.FlagChannelMaj
	}
	c := &mxCase{d: plan.Dispatch{Kernel: plan.Conv1D, Type: typ}}
	c.bind(0, c.add(q, true), 0)
	c.bind(1, c.add(ggml.F32Bytes(x), false), 0)
	if withBias {
		c.bind(2, c.add(ggml.F32Bytes(bias), false), 0)
	} else {
		c.noBind(2)
	}
	ob := c.add(ggml.F32Bytes(out), false)
	c.bind(3, ob, 0)
	c.out = int(ob)
	c.d.P = plan.Conv1DArgs{Cin: cin, Cout: cout, T: T, Kw: kw, Stride: stride, Pad: pad, Flags: flags, Ldx: ldx, Ldo: ldo}.Dispatch().P

	exact := make([]float64, len(out))
	for i, v := range out {
		exact[i] = float64(v)
	}
	for to := 0; to < tout; to++ {
		for co := 0; co < cout; co++ {
			var s float64
			if withBias {
				s = float64(bias[co])
			}
			for ci := 0; ci < cin; ci++ {
				for j := 0; j < kw; j++ {
					tt := to*stride + j - pad
					if tt < 0 || tt >= T {
						continue
					}
					var xv float32
					if chanMajor {
						xv = x[ci*ldx+tt]
					} else {
						xv = x[tt*ldx+ci]
					}
					s += float64(w[co*cin*kw+ci*kw+j]) * float64(xv)
				}
			}
			exact[to*ldo+co] = s
		}
	}
	return c, exact
}

func TestConv1DAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range shaders.MatrixTypes() {
		// Whisper's convolutions (f16, f32) in both layouts; the other
		// types in one layout each
		for _, cm := range []bool{false, true} {
			if typ != ggml.F16 && typ != ggml.F32 && cm != (typ%2 == 0) {
				continue
			}
			c, exact := convCase(t, r, typ, cm, typ != ggml.Q8_0)
			check(t, fmt.Sprintf("conv1d %s channel-major=%v", typ, cm), typ, c, exact)
		}
	}
	// Whisper's shapes scaled down: conv1 (mel channels, kw 3, stride 1,
	// pad 1, channel-major), conv2 (stride 2, time-major), and a single
	// output step
	for _, sh := range []struct {
		s  convShape
		cm bool
	}{
		{convShape{80, 3, 40, 37, 1, 1}, true},
		{convShape{40, 3, 40, 37, 2, 1}, false},
		{convShape{16, 5, 9, 5, 1, 0}, true},
	} {
		for _, typ := range []ggml.Type{ggml.F16, ggml.F32} {
			c, exact := convCaseShape(t, r, typ, sh.cm, true, sh.s)
			check(t, fmt.Sprintf("conv1d %s %+v", typ, sh.s), typ, c, exact)
		}
	}
}

func TestEmbedAllTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range shaders.MatrixTypes() {
		for _, acc := range []bool{false, true} {
			c, exact := embedCase(t, r, typ, mxK(typ), acc)
			check(t, fmt.Sprintf("embed %s accumulate=%v", typ, acc), typ, c, exact)
		}
	}
}

// TestEmbedAdd checks embed with rows added in the same launch (Whisper's
// positional embedding: a row per token at an odd stride and offset, or
// one row for every token, lda 0), with and without accumulate.
func TestEmbedAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_K} {
		for _, acc := range []bool{false, true} {
			for _, lda := range []int{0, mxK(typ) + 3} {
				c, exact := embedCase(t, r, typ, mxK(typ), acc)
				p := plan.DecodeEmbed(&c.d)
				const n, off = 5, 2
				add := randF32(r, off+max(1, n*lda)+mxK(typ), 1)
				c.bind(3, c.add(ggml.F32Bytes(add), false), 4*off)
				p.Lda = lda
				c.d.P = p.Dispatch().P
				for tk := range n {
					for i := range p.Dim {
						exact[tk*p.Ldo+i] += float64(add[off+tk*lda+i])
					}
				}
				check(t, fmt.Sprintf("embed+add %s accumulate=%v lda=%d", typ, acc, lda), typ, c, exact)
			}
		}
	}
}

// embedCase builds an Embed dispatch of 5 ids into a table of 9 rows of
// dim elements, and its exact result.
func embedCase(t *testing.T, r *rand.Rand, typ ggml.Type, dim int, acc bool) (*mxCase, []float64) {
	const rows, n = 9, 5
	ldo := dim + 4
	q, w := randWeights(t, r, typ, rows, dim)
	ids := []int32{3, 0, 8, 3, 5}
	idb := make([]byte, 4*n)
	for i, id := range ids {
		binary.LittleEndian.PutUint32(idb[4*i:], uint32(id))
	}
	out := randF32(r, n*ldo, 1)
	c := &mxCase{d: plan.Dispatch{Kernel: plan.Embed, Type: typ, Grid: [3]uint32{n, 1, 1}}}
	c.bind(0, c.add(q, true), 0)
	c.bind(1, c.add(idb, false), 0)
	ob := c.add(ggml.F32Bytes(out), false)
	c.bind(2, ob, 0)
	c.out = int(ob)
	var flags uint32
	if acc {
		flags = plan.FlagAccumulate
	}
	c.d.P = plan.EmbedArgs{Add: plan.None, Dim: dim, N: int(n), Ldo: ldo, Flags: flags}.Dispatch().P
	exact := make([]float64, len(out))
	for i, v := range out {
		exact[i] = float64(v)
	}
	for tk, id := range ids {
		for i := 0; i < dim; i++ {
			v := float64(w[int(id)*dim+i])
			if acc {
				v += float64(out[tk*ldo+i])
			}
			exact[tk*ldo+i] = v
		}
	}
	return c, exact
}

// TestMatVecTuning runs mat_vec under other rows-per-SIMD-group, batch and
// SIMD-groups-per-threadgroup knobs than Default, so every value a family
// table may choose is known to give the same result; 13 activation rows
// take the cuda family's MatVecBatchMany (4 rows a threadgroup).
func TestMatVecTuning(t *testing.T) {
	base := TestBackend(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, tun := range []shaders.Tuning{
		{MaxThreads: 1024, MatVecRows: 1, MatVecBatch: 1, MatVecSIMDGroups: 1},
		{MaxThreads: 1024, MatVecRows: 3, MatVecBatch: 5, MatVecSIMDGroups: 4},
		{MaxThreads: 1024, MatVecRows: 2, MatVecBatch: 8, MatVecSIMDGroups: 3},
		{MaxThreads: 64, MatVecRows: 9, MatVecBatch: 20, MatVecSIMDGroups: 8}, // clamped to 4, 8, 2
		shaders.TuningFor("cuda"),
	} {
		be := base.WithTuning(tun)
		for _, typ := range []ggml.Type{ggml.F16, ggml.Q4_K, ggml.Q5_0} {
			for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec} {
				for _, m := range []int{7, 13} {
					c, exact := productCase(t, r, kern, typ, 29, m, true, false)
					got := runOn(t, be, c)
					e := relErr(got, exact)
					require.LessOrEqual(t, e, mxTight, "%s %s m=%d rows=%d batch=%d/%d sg=%d", kern, typ, m,
						tun.MatVecRows, tun.MatVecBatch, tun.MatVecBatchMany, tun.MatVecSIMDGroups)
				}
			}
		}
	}
}

// Every function a matrix launch rule can name is in the library.
func TestMatrixFunctionsExist(t *testing.T) {
	if TestBackend(t).Device() != nil {
		t.Skip("executor library check; on a device the backend's load finds every function a plan reaches")
	}
	lib := TestBackend(t).Library()
	for _, k := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.LayerNormMatVec, plan.SiLUMulMatVec, plan.MatMul, plan.Conv1D, plan.Embed} {
		for _, typ := range shaders.MatrixTypes() {
			if k == plan.LayerNormMatVec && !plan.LayerNormMatVecType(typ) {
				continue
			}
			var d plan.Dispatch
			switch k {
			case plan.LayerNormMatVec:
				d = plan.LayerNormMatVecArgs{Type: typ, Bias: plan.None, Res: plan.None, N: 64, K: 256, M: 2, Ldx: 256, Ldo: 64, Ldr: 64}.Dispatch()
			case plan.MatVec:
				d = plan.MatVecArgs{Type: typ, Bias: plan.None, Res: plan.None, N: 64, K: 256, M: 2, Ldx: 256, Ldo: 64, Ldr: 64}.Dispatch()
			case plan.MatMul:
				d = plan.MatMulArgs{Type: typ, Bias: plan.None, Res: plan.None, N: 64, K: 256, M: 2, Ldx: 256, Ldo: 64, Ldr: 64}.Dispatch()
			case plan.RMSNormMatVec:
				d = plan.RMSNormMatVecArgs{Type: typ, Bias: plan.None, Res: plan.None, N: 64, K: 256, M: 2, Ldx: 256, Ldo: 64, Ldr: 64}.Dispatch()
			case plan.SiLUMulMatVec:
				d = plan.SiLUMulMatVecArgs{Type: typ, Bias: plan.None, Res: plan.None, N: 64, K: 256, M: 2, Ldg: 256, Ldo: 64, Ldr: 64, Ldu: 256}.Dispatch()
			case plan.Conv1D:
				d = plan.Conv1DArgs{Type: typ, Bias: plan.None, Cin: 64, Cout: 8, T: 10, Kw: 4, Stride: 1, Ldx: 10, Ldo: 8}.Dispatch()
			case plan.Embed:
				d = plan.EmbedArgs{Type: typ, Add: plan.None, Dim: 256, N: 3, Ldo: 256}.Dispatch()
			}
			lns, err := shaders.LaunchFor(&d, &shaders.Default, nil)
			require.NoError(t, err, "%s %s", k, typ)
			require.Len(t, lns, 1)
			require.True(t, lib.Has(lns[0].Function), lns[0].Function)
		}
	}
}

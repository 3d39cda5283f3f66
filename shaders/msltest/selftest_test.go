package msltest

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/shaders"
	"github.com/harkapp/hark/shaders/msl"
)

// selftestLib is the library of testdata/selftest.metal (executor tests).
func selftestLib(t testing.TB) *Library {
	b, err := os.ReadFile("testdata/selftest.metal")
	require.NoError(t, err)
	l, err := Open([]msl.Source{{Name: "selftest.metal", Text: string(b)}})
	require.NoError(t, err)
	return l
}

func f32ptr(s []float32) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(s)) }

func launch1(fn string, groups, threads uint32) *shaders.Launch {
	return &shaders.Launch{Function: fn, Groups: [3]uint32{groups, 1, 1}, Threads: [3]uint32{threads, 1, 1}}
}

func TestSelfThreadgroupMemory(t *testing.T) {
	l := selftestLib(t)
	const ntg, groups = 96, 5
	in := make([]float32, ntg*groups)
	for i := range in {
		in[i] = float32(i)
	}
	for _, fn := range []string{"tg_reverse", "tg_dynamic"} {
		out := make([]float32, len(in))
		ln := launch1(fn, groups, ntg)
		ln.Threadgroup = ntg * 4
		ln.Constants = []shaders.Constant{{Index: 3, Value: 2}}
		require.NoError(t, l.Run(ln, &[16]unsafe.Pointer{f32ptr(in), f32ptr(out)}))
		for g := 0; g < groups; g++ {
			sum := float32(0)
			for i := 0; i < ntg; i++ {
				sum += in[g*ntg+i]
			}
			for i := 0; i < ntg; i++ {
				want := in[g*ntg+ntg-1-i]
				if fn == "tg_dynamic" {
					want += 2 * sum
				}
				require.Equal(t, want, out[g*ntg+i], "%s group %d thread %d", fn, g, i)
			}
		}
	}
}

func TestSelfThreadgroupLimit(t *testing.T) {
	l := selftestLib(t)
	in := make([]float32, 64)
	out := make([]float32, 64)
	ln := launch1("tg_dynamic", 1, 64)
	ln.Threadgroup = 33 << 10
	require.ErrorContains(t, l.Run(ln, &[16]unsafe.Pointer{f32ptr(in), f32ptr(out)}), "threadgroup memory")
}

// simdRef computes what simd_all_ops writes for one SIMD-group whose lanes
// below active take part.
func simdRef(v []float32, active, sg int) [][16]float32 {
	out := make([][16]float32, active)
	var sum, mx, mn float32 = 0, float32(math.Inf(-1)), float32(math.Inf(1))
	var ballot uint32
	anyHi, all := false, true
	for i := 0; i < active; i++ {
		sum += v[i]
		mx = max(mx, v[i])
		mn = min(mn, v[i])
		if v[i] > 0 {
			ballot |= 1 << i
		}
		anyHi = anyHi || v[i] > 0.9
		all = all && v[i] > -2
	}
	pre := float32(0)
	for l := 0; l < active; l++ {
		o := &out[l]
		o[0], o[1], o[2] = sum, mx, mn
		o[3] = pre
		pre += v[l]
		o[4] = pre
		o[5] = v[(l*7)%active]
		pick := func(s int) float32 {
			if s >= 0 && s < active {
				return v[s]
			}
			return v[l]
		}
		o[6] = pick(l + 3)
		o[7] = pick(l - 2)
		o[8] = pick(l ^ 1)
		o[9] = pick(1)
		o[10] = v[0]
		if anyHi {
			o[11] = 1
		}
		if all {
			o[12] = 1
		}
		o[13] = float32(ballot & 0xffff)
		o[14] = float32(active * (active - 1) / 2)
		o[15] = float32(active) + float32(sg)*1000
	}
	return out
}

func TestSelfSIMDFunctions(t *testing.T) {
	l := selftestLib(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, active := range []uint32{32, 31, 17, 5, 1} {
		const n = 96 // three SIMD-groups per threadgroup, two threadgroups
		in := make([]float32, 2*n)
		for i := range in {
			in[i] = float32(rng.IntN(2000)-1000) / 1000
		}
		out := make([]float32, len(in)*16)
		for i := range out {
			out[i] = -12345
		}
		act := []uint32{active}
		ln := launch1("simd_all_ops", 2, n)
		require.NoError(t, l.Run(ln, &[16]unsafe.Pointer{f32ptr(in), f32ptr(out), unsafe.Pointer(&act[0])}))
		for s := 0; s < len(in)/32; s++ {
			ref := simdRef(in[s*32:], int(active), s%3)
			for lane := 0; lane < 32; lane++ {
				got := out[(s*32+lane)*16 : (s*32+lane+1)*16]
				if lane >= int(active) {
					require.Equal(t, float32(-12345), got[0], "returned lane wrote")
					continue
				}
				for k := range 16 {
					require.InDelta(t, ref[lane][k], got[k], 1e-4, "active %d simdgroup %d lane %d op %d", active, s, lane, k)
				}
			}
		}
	}
}

func TestSelfSimdgroupMatrix(t *testing.T) {
	l := selftestLib(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const M, N, K = 16, 32, 24
	a := make([]float32, M*K)
	b := make([]float32, K*N)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	want := make([]float32, M*N)
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s float32
			for k := 0; k < K; k++ {
				s += a[i*K+k] * b[k*N+j]
			}
			want[i*N+j] = s
		}
	}
	dims := []uint32{M, N, K, 0}
	ln := &shaders.Launch{Function: "sg_matmul_f32", Groups: [3]uint32{N / 16, M / 8, 1}, Threads: [3]uint32{64, 1, 1}}
	c := make([]float32, M*N)
	require.NoError(t, l.Run(ln, &[16]unsafe.Pointer{f32ptr(a), f32ptr(b), f32ptr(c), unsafe.Pointer(&dims[0])}))
	for i := range want {
		require.InDelta(t, want[i], c[i], 1e-4, "f32 element %d", i)
	}
	// half inputs
	ah := make([]uint16, len(a))
	bh := make([]uint16, len(b))
	for i := range a {
		ah[i] = ggml.FP32ToFP16(a[i])
	}
	for i := range b {
		bh[i] = ggml.FP32ToFP16(b[i])
	}
	ln.Function = "sg_matmul_f16"
	clear(c)
	require.NoError(t, l.Run(ln, &[16]unsafe.Pointer{unsafe.Pointer(&ah[0]), unsafe.Pointer(&bh[0]), f32ptr(c), unsafe.Pointer(&dims[0])}))
	for i := range want {
		require.InDelta(t, want[i], c[i], 2e-2, "f16 element %d", i)
	}
	// transposed load
	tin := make([]float32, 64)
	for i := range tin {
		tin[i] = float32(i)
	}
	tout := make([]float32, 64)
	require.NoError(t, l.Run(launch1("sg_transpose", 1, 32), &[16]unsafe.Pointer{f32ptr(tin), f32ptr(tout)}))
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			require.Equal(t, tin[c*8+r], tout[r*8+c])
		}
	}
	// a product of a product: (A·B)·B + A
	a8, b8 := a[:64], b[:64]
	want8 := make([]float32, 64)
	tmp := make([]float32, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			for k := 0; k < 8; k++ {
				tmp[i*8+j] += a8[i*8+k] * b8[k*8+j]
			}
		}
	}
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			want8[i*8+j] = a8[i*8+j]
			for k := 0; k < 8; k++ {
				want8[i*8+j] += tmp[i*8+k] * b8[k*8+j]
			}
		}
	}
	d8 := make([]float32, 64)
	require.NoError(t, l.Run(launch1("sg_chain", 1, 32), &[16]unsafe.Pointer{f32ptr(a8), f32ptr(b8), f32ptr(d8)}))
	for i := range want8 {
		require.InDelta(t, want8[i], d8[i], 1e-4, "chain element %d", i)
	}
	// a SIMD-group with missing lanes cannot multiply
	ln = &shaders.Launch{Function: "sg_matmul_f32", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{48, 1, 1}}
	require.ErrorContains(t, l.Run(ln, &[16]unsafe.Pointer{f32ptr(a), f32ptr(b), f32ptr(c), unsafe.Pointer(&dims[0])}), "32 lanes")
}

func TestSelfAtomics(t *testing.T) {
	l := selftestLib(t)
	const n, tg = 1000, 100
	in := make([]uint32, n)
	want := make([]uint32, 9)
	var fsum float32
	for i := range in {
		in[i] = uint32(i * 7 % 13)
		want[in[i]%8]++
		fsum += float32(in[i])
	}
	want[8] = n
	hist := make([]uint32, 9)
	fs := []float32{0}
	im := []int32{-1}
	require.NoError(t, l.Run(launch1("atomics", n/tg, tg), &[16]unsafe.Pointer{unsafe.Pointer(&in[0]), unsafe.Pointer(&hist[0]), f32ptr(fs), unsafe.Pointer(&im[0])}))
	require.Equal(t, want, hist)
	require.Equal(t, fsum, fs[0])
	require.Equal(t, int32(12), im[0])
}

func TestSelfVectors(t *testing.T) {
	l := selftestLib(t)
	in := make([]uint16, 4*40)
	for i := range in {
		in[i] = ggml.FP32ToFP16(float32(i%17) - 8.5)
	}
	out := make([]float32, 4*40)
	require.NoError(t, l.Run(launch1("vectors", 1, 40), &[16]unsafe.Pointer{unsafe.Pointer(&in[0]), f32ptr(out)}))
	for g := 0; g < 40; g++ {
		v := make([]float32, 4)
		for i := range v {
			v[i] = ggml.FP16ToFP32(in[g*4+i])
		}
		w := []float32{v[2] + 1, v[3] + 1, v[0], v[1]}
		want := []float32{w[0], w[1], w[0] + v[0]*v[2] + v[1]*v[3], max(float32(math.Abs(float64(w[3]))), 0.5)}
		require.Equal(t, want, out[g*4:g*4+4], "thread %d", g)
	}
}

func TestSelfDivergence(t *testing.T) {
	l := selftestLib(t)
	const n = 50 // the second SIMD-group has 18 live lanes
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i%7) - 3
	}
	out := make([]float32, 64)
	nn := []uint32{n}
	require.NoError(t, l.Run(launch1("divergent", 1, 64), &[16]unsafe.Pointer{f32ptr(in), f32ptr(out), unsafe.Pointer(&nn[0])}))
	for s := 0; s < 2; s++ {
		var lo, hi float32
		hi = float32(math.Inf(-1))
		for lane := 0; lane < 32; lane++ {
			g := s*32 + lane
			if g >= n {
				continue
			}
			if lane < 16 {
				lo += in[g]
			} else {
				hi = max(hi, in[g])
			}
		}
		for lane := 0; lane < 32; lane++ {
			g := s*32 + lane
			if g >= n {
				require.Zero(t, out[g], "thread %d returned", g)
				continue
			}
			want := lo
			if lane >= 16 {
				want = hi + 1000
			}
			want += 0.5 // lane 3 is live in both SIMD-groups
			require.Equal(t, want, out[g], "thread %d", g)
		}
	}
}

// TestReverseOrder reruns the self-tests and the element-wise checks with
// the threads of each threadgroup run last-first: results must not depend
// on the order SIMD-groups run in.
func TestReverseOrder(t *testing.T) {
	if TestBackend(t).Device() != nil {
		t.Skip("executor thread order; on a device, $HARK_CUDA_PERMUTE permutes block order instead")
	}
	for _, l := range []*Library{selftestLib(t), TestBackend(t).Library()} {
		prev := l.SetReverse(true)
		defer l.SetReverse(prev)
	}
	t.Run("tg", TestSelfThreadgroupMemory)
	t.Run("simd", TestSelfSIMDFunctions)
	t.Run("simd-more", TestSelfSIMDMore)
	t.Run("matrix", TestSelfSimdgroupMatrix)
	t.Run("atomics", TestSelfAtomics)
	t.Run("divergence", TestSelfDivergence)
	t.Run("elementwise", TestElementwiseVsCPU)
}

func TestSelfSIMDMore(t *testing.T) {
	l := selftestLib(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, active := range []uint32{32, 29, 7, 1} {
		in := make([]uint32, 64)
		for i := range in {
			in[i] = rng.Uint32()
		}
		out := make([]uint32, len(in)*8)
		act := []uint32{active}
		require.NoError(t, l.Run(launch1("simd_more_ops", 1, 64), &[16]unsafe.Pointer{unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), unsafe.Pointer(&act[0])}))
		for s := 0; s < 2; s++ {
			v := in[s*32 : s*32+int(active)]
			and, xor := ^uint32(0), uint32(0)
			for _, x := range v {
				and &= x
				xor ^= x
			}
			var mask uint32 = 1<<active - 1
			if active == 32 {
				mask = ^uint32(0)
			}
			pre := uint32(1)
			for lane := 0; lane < int(active); lane++ {
				o := out[(s*32+lane)*8 : (s*32+lane+1)*8]
				rot := func(src int) uint32 { // inactive sources keep the lane's own value
					src &= 31
					if src < int(active) {
						return v[src]
					}
					return v[lane]
				}
				f := v[lane]%3 + 1
				want := []uint32{and, xor, pre, pre * f, rot(lane + 5), rot(lane - 3), 0, mask}
				pre *= f
				if lane == 0 {
					want[6] = 1
				}
				require.Equal(t, want, o, "active %d simdgroup %d lane %d", active, s, lane)
			}
		}
	}
}

package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// withPackedKernels installs the VNNI kernels for the test, or skips it on
// a CPU without them.
func withPackedKernels(t *testing.T) {
	t.Helper()
	if !hasVNNI {
		t.Skip("the CPU has no AVX-512 VNNI: there is no packed kernel to test")
	}
	useVNNI(true)
	t.Cleanup(func() { useVNNI(hasVNNI) })
}

// The packed kernels compute the same integer sums and the same float
// operations in the same order as the unpacked VNNI kernels: bit-equal
// results, for any number of blocks and rows not a multiple of the group.
func TestPackedVNNIExact(t *testing.T) {
	withPackedKernels(t)
	r := rand.New(rand.NewPCG(5, 9))
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		kd := kinds[typ]
		for _, n := range []int{8, 13, 16, 37, 131} {
			for _, k := range []int{32, 96, 224, 576} {
				nb := k / 32
				w := randWeights(r, typ, n, k)
				xq := make([]byte, nb*q8_0Bytes)
				kd.quantize(randF32(r, k), xq)
				want := make([]float32, n)
				kd.dotQRows(w, len(w)/n, xq, nb, want)
				a := mulArgs{kd: kd, rb: len(w) / n, n: n, k: k, m: 1, out: make([]float32, n), ldo: n,
					act: xq, actRB: len(xq), packed: packWeights(nil, typ, w, n, k)}
				a.packedRows(0, n, make([]float32, 16))
				for j := range n {
					require.Equal(t, math.Float32bits(want[j]), math.Float32bits(a.out[j]),
						"%s %dx%d row %d: %v != %v", typ, n, k, j, a.out[j], want[j])
				}
				if kd.prepPacked == nil {
					continue
				}
				// The kernel on activations prepared once (prepQ8_0X), as
				// quantizeActs makes them for a packed product.
				a.xpRB = nb * q8PrepBytes
				a.xp = make([]byte, a.xpRB)
				kd.prepPacked(xq, nb, a.xp)
				clear(a.out)
				a.packedRows(0, n, make([]float32, 16))
				for j := range n {
					require.Equal(t, math.Float32bits(want[j]), math.Float32bits(a.out[j]),
						"%s %dx%d row %d, prepared: %v != %v", typ, n, k, j, a.out[j], want[j])
				}
			}
		}
	}
}

// Products on packed weights match the float64 reference with the VNNI
// kernels on (packed path) and off (AVX2 path on the original weights),
// on one and two workers, synchronously and fenced.
func TestPackedMul(t *testing.T) {
	defer useVNNI(hasVNNI)
	r := rand.New(rand.NewPCG(6, 10))
	cases := []mulCase{
		{n: 8, k: 32, m: 1, pack: true},
		{n: 37, k: 96, m: 1, bias: true, pack: true},
		{n: 131, k: 576, m: 1, res: true, alias: true, pack: true},
		{n: 45, k: 224, m: 3, ldxPad: 3, ldoPad: 2, bias: true, res: true, pack: true},
		{n: 1000, k: 64, m: 2, bias: true, pack: true},
	}
	for _, workers := range []int{1, 2} {
		pool := NewPool(workers)
		for _, on := range []bool{true, false} {
			useVNNI(on)
			for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
				for _, c := range cases {
					mm := NewMatMul(pool)
					checkMul(t, mm, r, typ, c)
					require.Equal(t, on && hasVNNI, len(mm.packs) == 1, "%s %+v vnni=%v: packed", typ, c, on)
				}
			}
		}
		pool.Close()
	}
}

// The packed path against the unpacked one through Mul, asynchronous
// (the executor's decode path) included: the same quantized activations
// give bit-equal outputs.
func TestPackedMulExact(t *testing.T) {
	withPackedKernels(t)
	r := rand.New(rand.NewPCG(7, 3))
	for _, workers := range []int{1, 2, 3} {
		pool := NewPool(workers)
		for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
			for _, sh := range [][3]int{{576, 576, 1}, {1539, 96, 1}, {203, 576, 4}} {
				n, k, m := sh[0], sh[1], sh[2]
				w := randWeights(r, typ, n, k)
				x := randF32(r, m*k)
				bias := randF32(r, n)
				var outs [2][]float32
				for i, pack := range []bool{false, true} {
					mm := NewMatMul(pool)
					if pack {
						require.Equal(t, len(w), mm.Pack(typ, w, n, k))
						require.Zero(t, mm.Pack(typ, w, n, k), "packed twice")
						require.NotNil(t, mm.packFor(&mulArgs{kd: kinds[typ], w: w, n: n, k: k, m: m}))
						require.Nil(t, mm.packFor(&mulArgs{kd: kinds[typ], w: w, n: n - 1, k: k, m: m}), "another shape")
						require.Nil(t, mm.packFor(&mulArgs{kd: kinds[typ], w: w[1:], n: n - 1, k: k, m: m}), "another start")
					}
					for _, async := range []bool{false, true} {
						mm.async = async
						out := make([]float32, m*n)
						require.NoError(t, mm.Mul(typ, w, n, k, m, x, k, out, n, bias, nil, 0))
						pool.Fence()
						if outs[i] == nil {
							outs[i] = out
						}
						require.Equal(t, outs[i], out, "%s %v async=%v", typ, sh, async)
					}
				}
				for j := range outs[0] {
					require.Equal(t, math.Float32bits(outs[0][j]), math.Float32bits(outs[1][j]),
						"%s %v workers=%d out %d", typ, sh, workers, j)
				}
			}
		}
		pool.Close()
	}
}

// Load packs the Q8_0/Q4_0/Q5_0 row-product weights when the packed kernels are
// installed, and nothing when they are not.
func TestLoadPacksProducts(t *testing.T) {
	defer useVNNI(hasVNNI)
	const dim, ff, qkvW = 64, 96, 128 // decodePlan's Q8_0 and Q4_0 products
	want := qkvW*2*34 + 2*ff*2*18 + dim*3*34
	for _, on := range []bool{true, false} {
		useVNNI(on)
		h, _ := decodePlan(t)
		ex := h.load()
		if on && hasVNNI {
			require.Equal(t, want, ex.packed)
		} else {
			require.Zero(t, ex.packed)
		}
	}
	// Past the budget the remaining matrices stay unpacked (in plan order:
	// wqkv fits, wup would pass the budget, wdown2 fits after it).
	saved := packBudget
	defer func() { packBudget = saved }()
	packBudget = qkvW*2*34 + dim*3*34
	useVNNI(true)
	h, _ := decodePlan(t)
	ex := h.load()
	if hasVNNI {
		require.Equal(t, packBudget, ex.packed)
	}
}

// BenchmarkMatVecPacked: SmolLM2-135M decode shapes on the executor's
// path (asynchronous, fenced), 1 and 2 workers: the unpacked VNNI kernels
// with one chunk per worker (before), with asyncChunks per worker, and the
// packed kernels with asyncChunks per worker, reading the activations as
// they are (packed) or prepared once a product (packedx, prepQ8_0X).
func BenchmarkMatVecPacked(b *testing.B) {
	if !hasVNNI {
		b.Skip("the CPU has no AVX-512 VNNI: there is no packed kernel")
	}
	saved, savedX := asyncChunks, packPrepX
	defer func() { asyncChunks, packPrepX = saved, savedX; useVNNI(hasVNNI) }()
	variants := []struct {
		name       string
		chunks     int
		pack, prep bool
	}{{"old", 1, false, false}, {"chunks", saved, false, false}, {"packed", saved, true, false},
		{"packedx", saved, true, true}}
	for _, workers := range []int{1, 2} {
		pool := NewPool(workers)
		for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
			for _, s := range [][2]int{{576, 576}, {1536, 576}, {576, 1536}, {49152, 576}} {
				n, k := s[0], s[1]
				r := rand.New(rand.NewPCG(1, 2))
				w := randWeights(r, t, n, k)
				x := randF32(r, k)
				out := make([]float32, n)
				for _, v := range variants {
					b.Run(fmt.Sprintf("%s/%dx%d/w%d/%s", t, n, k, workers, v.name), func(b *testing.B) {
						asyncChunks, packPrepX = v.chunks, v.prep
						useVNNI(true)
						mm := NewMatMul(pool)
						mm.async = true
						if v.pack {
							mm.Pack(t, w, n, k)
						}
						b.SetBytes(int64(len(w)))
						for b.Loop() {
							if err := mm.Mul(t, w, n, k, 1, x, k, out, n, nil, nil, 0); err != nil {
								b.Fatal(err)
							}
							pool.Fence()
						}
					})
				}
			}
		}
		pool.Close()
	}
}

// prepQ8_0XVNNI lays the activation blocks out byte for byte as the Go
// version does: random and extreme codes (every block's eight sums at
// −1024 and +1016 included) at odd block counts, and every f16 scale (a
// NaN's payload may differ: F16C quiets signalling NaNs, so there both
// must be NaN).
func TestPrepQ8_0XVNNI(t *testing.T) {
	if !hasVNNI {
		t.Skip("the CPU has no AVX-512 VNNI: prepQ8_0XVNNI is not used")
	}
	r := rand.New(rand.NewPCG(31, 37))
	check := func(x []byte, nb int, what string) {
		t.Helper()
		want := make([]byte, nb*q8PrepBytes+7)
		got := make([]byte, nb*q8PrepBytes+7)
		for i := range got { // the bytes past the last block stay as they are
			got[i], want[i] = 0xa5, 0xa5
		}
		prepQ8_0XGo(x, nb, want)
		prepQ8_0XVNNI(&x[0], &got[0], nb)
		for b := range nb {
			w, g := want[b*q8PrepBytes:(b+1)*q8PrepBytes], got[b*q8PrepBytes:(b+1)*q8PrepBytes]
			if h := binary.LittleEndian.Uint16(x[b*q8_0Bytes:]); h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
				require.Equal(t, w[:48], g[:48], "%s block %d", what, b)
				require.True(t, math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(g[48:])))), "%s block %d: NaN scale", what, b)
				require.Equal(t, w[52:], g[52:], "%s block %d", what, b)
				continue
			}
			require.Equal(t, w, g, "%s block %d of %d", what, b, nb)
		}
		require.Equal(t, want[nb*q8PrepBytes:], got[nb*q8PrepBytes:], "%s: past the last block", what)
	}
	for _, nb := range []int{1, 2, 3, 5, 17, 18, 31, 48, 67} {
		x := make([]byte, nb*q8_0Bytes)
		for i := range x {
			x[i] = byte(r.Uint32())
		}
		check(x, nb, fmt.Sprintf("random nb=%d", nb))
		for b := range nb { // the extremes: all −128, all +127, alternating
			c := x[b*q8_0Bytes+2 : (b+1)*q8_0Bytes]
			for i := range c {
				c[i] = [3]byte{0x80, 0x7f, byte(0x80 ^ (i&1)*0xff)}[b%3]
			}
		}
		check(x, nb, fmt.Sprintf("extreme nb=%d", nb))
	}
	// every scale, 48 blocks at a time (a 1536-wide row)
	x := make([]byte, 48*q8_0Bytes)
	for i := range x {
		x[i] = byte(r.Uint32())
	}
	for h := 0; h < 1<<16; h += 48 {
		for b := range 48 {
			binary.LittleEndian.PutUint16(x[b*q8_0Bytes:], uint16(min(h+b, 1<<16-1)))
		}
		check(x, 48, fmt.Sprintf("scales from %#04x", h))
	}
}

// withPrepX runs f with prepQ8_0X's assembly (on) and its Go version (off).
func withPrepX(t *testing.T, f func(t *testing.T)) {
	defer func() { prepXVNNI = true }()
	for _, on := range []bool{true, false} {
		prepXVNNI = on
		t.Run(fmt.Sprintf("prepXVNNI=%v", on), f)
	}
}

// The packed products with the activations prepared by either version:
// bit for bit the unpacked kernels (TestPackedVNNIExact, TestPackedMulExact)
// and the float64 reference (TestPackedMul).
func TestPackedPrepBothPaths(t *testing.T) {
	withPrepX(t, TestPackedVNNIExact)
	withPrepX(t, TestPackedMulExact)
	withPrepX(t, TestPackedMul)
}

// BenchmarkPrepQ8_0X: a decode step's activation rows (576 and 1536 wide)
// prepared by the assembly and by the Go version.
func BenchmarkPrepQ8_0X(b *testing.B) {
	if !hasVNNI {
		b.Skip("the CPU has no AVX-512 VNNI: prepQ8_0XVNNI is not used")
	}
	defer func() { prepXVNNI = true }()
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{576, 1536} {
		nb := k / 32
		xq := make([]byte, nb*q8_0Bytes)
		kinds[ggml.Q8_0].quantize(randF32(r, k), xq)
		dst := make([]byte, nb*q8PrepBytes)
		for _, on := range []bool{true, false} {
			b.Run(fmt.Sprintf("k%d/vnni=%v", k, on), func(b *testing.B) {
				prepXVNNI = on
				for b.Loop() {
					prepQ8_0X(xq, nb, dst)
				}
			})
		}
	}
}

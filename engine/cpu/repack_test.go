package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/harkapp/hark/engine/blas"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// unpackWeights inverts packWeights from the layout's description (the
// kernels' register images), independently of its loops.
func unpackWeights(p *packed) []byte {
	ts := kinds[p.t].typeSize
	nb := p.k / 32
	rb := nb * ts
	w := make([]byte, p.n*rb)
	g8 := p.n / packGroup
	for row := range g8 * packGroup {
		g, r := row/packGroup, row%packGroup
		for b := range nb {
			blk := p.b[(g*nb+b)*packGroup*ts:]
			dst := w[row*rb+b*ts : row*rb+(b+1)*ts]
			dst[0], dst[1] = blk[2*r], blk[2*r+1]
			reg := 16 + (r/4)*64 + (r%4)*16 // rows 0-3, then rows 4-7, a 16-byte lane each
			switch p.t {
			case ggml.Q8_0:
				for i := range 16 {
					dst[2+i] = blk[reg+i] ^ 0x80      // codes 0-15: first pair of registers
					dst[18+i] = blk[128+reg+i] ^ 0x80 // codes 16-31: second pair
				}
			case ggml.Q5_0:
				// masks K1-K4: low qh halves of rows 0-3, high halves of rows
				// 0-3, low of rows 4-7, high of rows 4-7; 16 bits per row
				mask := 16 + (r/4)*16 + (r%4)*2
				copy(dst[2:4], blk[mask:mask+2])
				copy(dst[4:6], blk[mask+8:mask+10])
				copy(dst[6:22], blk[32+reg:32+reg+16])
			default:
				copy(dst[2:18], blk[reg:reg+16])
			}
		}
	}
	copy(w[g8*packGroup*rb:], p.b[g8*packGroup*rb:])
	return w
}

// The packed layout holds every byte of the original, rows not a multiple
// of the group and any number of blocks included.
func TestPackLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 12))
	pool := NewPool(3)
	defer pool.Close()
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		for _, n := range []int{8, 9, 15, 16, 37, 1029} {
			for _, k := range []int{32, 96, 576} {
				w := randWeights(r, typ, n, k)
				p := packWeights(nil, typ, w, n, k)
				require.Equal(t, len(w), len(p.b), "%s %dx%d: size", typ, n, k)
				require.Equal(t, w, unpackWeights(p), "%s %dx%d", typ, n, k)
				rb := len(w) / n
				row := make([]byte, rb)
				for j := range n {
					p.row(j, row)
					require.Equal(t, w[j*rb:(j+1)*rb], row, "%s %dx%d: row %d", typ, n, k, j)
				}
				require.Equal(t, p.b, packWeights(pool, typ, w, n, k).b, "%s %dx%d on the pool", typ, n, k)
			}
		}
	}
}

// BenchmarkPack: the load-time cost of packing SmolLM2's largest matrix,
// on the caller alone and on a pool.
func BenchmarkPack(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		for _, p := range []*Pool{nil, pool} {
			b.Run(fmt.Sprintf("%s/pool=%v", typ, p != nil), func(b *testing.B) {
				const n, k = 49152, 576
				w := randWeights(rand.New(rand.NewPCG(1, 2)), typ, n, k)
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					packWeights(p, typ, w, n, k)
				}
			})
		}
	}
}

// packTypes are the types with a packed layout.
var packTypes = []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0}

// withPortablePacked installs, for the test, a packed kernel for each
// packable type where the CPU has none (no AVX-512 VNNI): it unpacks each
// row (unpackBlock) and runs the installed row kernel on it, so that on
// any CPU products pack at load and every reader of a pack is exercised,
// with results bit-equal to the unpacked path's.
func withPortablePacked(t testing.TB) {
	for _, typ := range packTypes {
		kd := kinds[typ]
		if kd.dotPacked != nil {
			continue
		}
		kd.dotPacked = portablePacked(kd)
		t.Cleanup(func() { kd.dotPacked = nil })
	}
}

var portableRows = sync.Pool{New: func() any { return new([]byte) }}

func portablePacked(kd *kind) func(p []byte, nb int, x []byte, out []float32) {
	return func(p []byte, nb int, x []byte, out []float32) {
		ts := kd.typeSize
		bp := portableRows.Get().(*[]byte) // no garbage per call: TestPackedModelMemory counts the heap
		defer portableRows.Put(bp)
		if len(*bp) < nb*ts {
			*bp = make([]byte, nb*ts)
		}
		row := (*bp)[:nb*ts]
		for g := range len(out) / packGroup {
			grp := p[g*packGroup*nb*ts : (g+1)*packGroup*nb*ts]
			for r := range packGroup {
				for b := range nb {
					unpackBlock(kd.t, grp[b*packGroup*ts:(b+1)*packGroup*ts], r, row[b*ts:(b+1)*ts])
				}
				kd.dotQRows(row, nb*ts, x, nb, out[g*packGroup+r:g*packGroup+r+1])
			}
		}
	}
}

// A pack replaces its original for every reader: with the original
// overwritten after packing, each path of Mul (row products, the quantized
// GEMM with each kernel this CPU runs, sgemm on dequantized tiles split
// over the pool or not, the portable rows for m >= 16) gives bit-for-bit
// the output of the unpacked product, at odd sizes, on 1 to 3 workers.
func TestPackReplacesOriginal(t *testing.T) {
	withPortablePacked(t)
	savedK, savedThreads := qgemmKernel, blas.Threads()
	defer func() { qgemmKernel = savedK; blas.SetThreads(savedThreads) }()
	type path struct {
		name   string
		qgemm  int
		kernel qgemmTestKernel // with qgemmOn
		noBLAS bool
		blasT  int // blas.SetThreads: 0 leaves the pool to split (gemmSplit)
	}
	paths := []path{{name: "rows", qgemm: qgemmOff, noBLAS: true}}
	for name, k := range qgemmKernels() {
		paths = append(paths, path{name: "qgemm-" + name, qgemm: qgemmOn, kernel: k})
	}
	if blas.Available() {
		paths = append(paths, path{name: "sgemm-split", qgemm: qgemmOff, blasT: 1}, path{name: "sgemm", qgemm: qgemmOff, blasT: 2})
	}
	r := rand.New(rand.NewPCG(21, 8))
	for _, workers := range []int{1, 2, 3} {
		pool := NewPool(workers)
		for _, ph := range paths {
			if ph.kernel.k != nil {
				qgemmKernel = ph.kernel.k
			}
			for _, typ := range packTypes {
				if ph.qgemm == qgemmOn && panelDecoders[typ].maxCode > ph.kernel.maxCode {
					continue
				}
				for _, sh := range [][3]int{{37, 96, 1}, {203, 224, 3}, {45, 608, 17}, {131, 96, 40}} {
					n, k, m := sh[0], sh[1], sh[2]
					if ph.blasT != 0 && m < gemmMinM {
						continue
					}
					if ph.blasT != 0 {
						blas.SetThreads(ph.blasT)
					}
					outs := mulPackedAndNot(t, pool, r, typ, n, k, m, func(mm *MatMul) { mm.qgemm, mm.noBLAS = ph.qgemm, ph.noBLAS })
					for j := range outs[0] {
						require.Equal(t, math.Float32bits(outs[0][j]), math.Float32bits(outs[1][j]),
							"%s %s %v workers=%d out %d: %v != %v", ph.name, typ, sh, workers, j, outs[1][j], outs[0][j])
					}
				}
			}
		}
		pool.Close()
	}
}

// mulPackedAndNot runs one random product twice on MatMuls set up by set:
// on the weights as they are, then packed with the original overwritten
// (NaN scales: a read of the original shows).
func mulPackedAndNot(t *testing.T, pool *Pool, r *rand.Rand, typ ggml.Type, n, k, m int, set func(*MatMul)) (outs [2][]float32) {
	w := randWeights(r, typ, n, k)
	x := randF32(r, m*k)
	bias := randF32(r, n)
	for i := range outs {
		mm := NewMatMul(pool)
		set(mm)
		wi := append([]byte(nil), w...)
		if i == 1 {
			require.Equal(t, len(w), mm.Pack(typ, wi, n, k))
			for j := range wi {
				wi[j] = 0xFF
			}
		}
		outs[i] = make([]float32, m*n)
		require.NoError(t, mm.Mul(typ, wi, n, k, m, x, k, outs[i], n, bias, nil, 0))
	}
	return outs
}

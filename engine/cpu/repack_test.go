package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

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

package msltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// pagedPool is a paged KV pool for the M-sequence kernels: rows at their
// own positions, each with distinct blocks in a shuffled order; table
// entries past a row's position name no block of the pool, so a kernel that
// reads one fails.
type pagedPool struct {
	hd, nKV, bs, ts, nBlocks int
	hs, ps, bstride          int
	pos, table               []int32
}

func newPagedPool(r *rand.Rand, hd, nKV, bs, ts int, pos []int32) *pagedPool {
	return newPagedPoolHoles(r, hd, nKV, bs, ts, pos, 2)
}

// newPagedPoolHoles is newPagedPool with holes blocks nobody owns (NaN)
// shuffled among the owned ones.
func newPagedPoolHoles(r *rand.Rand, hd, nKV, bs, ts int, pos []int32, holes int) *pagedPool {
	p := &pagedPool{hd: hd, nKV: nKV, bs: bs, ts: ts, pos: pos}
	used := 0
	for _, ps := range pos {
		used += int(ps)/bs + 1
	}
	p.nBlocks = used + holes
	p.ps = hd + 3
	p.hs = bs*p.ps + 1
	p.bstride = nKV*p.hs + 5
	perm := r.Perm(p.nBlocks)
	p.table = make([]int32, len(pos)*ts)
	n := 0
	for t, ps := range pos {
		for i := range ts {
			p.table[t*ts+i] = int32(p.nBlocks + 7)
			if i <= int(ps)/bs {
				p.table[t*ts+i] = int32(perm[n])
				n++
			}
		}
	}
	return p
}

// cells encodes the pool: random values in owned blocks, NaN elsewhere
// (f32 or f16).
func (p *pagedPool) cells(r *rand.Rand, ty ggml.Type, random bool) []byte {
	v := kitNaNs(p.nBlocks * p.bstride)
	if random {
		for t, ps := range p.pos {
			for i := 0; i <= int(ps)/p.bs; i++ {
				b := int(p.table[t*p.ts+i])
				if b >= p.nBlocks {
					continue // a bad table (TestPagedKernelsBadRow)
				}
				copy(v[b*p.bstride:], kitRand(r, p.bstride, 1))
			}
		}
	}
	if ty == ggml.F16 {
		return kitF16(v)
	}
	return kitF32(v)
}

var pagedCases = []struct {
	hd, nHead, nKV, bs, ts int
	pos                    []int32
	window                 int
	mode                   plan.RopeMode
}{
	{64, 4, 2, 16, 4, []int32{0, 37, 15, 50}, 0, plan.RopeNormal},
	{34, 6, 2, 3, 20, []int32{40, 2, 57}, 0, plan.RopeNeoX},       // odd sizes, GQA
	{80, 3, 3, 5, 30, []int32{130, 7}, 0, plan.RopeNormal},        // past 128 keys
	{16, 4, 1, 4, 12, []int32{33, 40, 0, 1, 5}, 6, plan.RopeNeoX}, // sliding window
	// more 32-key tiles than attention_paged has SIMD-groups (each walks
	// several), a window starting inside a tile, a row within one tile
	{64, 2, 2, 16, 40, []int32{600, 17}, 0, plan.RopeNeoX},
	{32, 4, 1, 8, 64, []int32{500, 290, 3}, 100, plan.RopeNormal},
}

// RopeKVPaged: each row rotated at its own position and its K/V stored
// into its own block; every other cell keeps its poison.
func TestRopeKVPagedKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 1))
	worst := 0.0
	for _, c := range pagedCases {
		for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
			p := newPagedPool(r, c.hd, c.nKV, c.bs, c.ts, c.pos)
			m := len(c.pos)
			w := (c.nHead + 2*c.nKV) * c.hd
			ld := w + 3
			d := plan.RopeKVPagedArgs{Type: ty, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: m, Ldqkv: ld, Mode: c.mode,
				RopeDim: c.hd - 2, HeadStride: p.hs, PosStride: p.ps, BlockSize: c.bs, BlockStride: p.bstride, NBlocks: p.nBlocks, TableStride: c.ts}.Dispatch()
			ref, got := kitRun(t, d, [][]byte{kitF32(kitRand(r, (m-1)*ld+w, 1)), kitF32(ropeFreqs(c.hd-2, 10000)),
				p.cells(r, ty, false), p.cells(r, ty, false), kitI32(c.pos), kitI32(p.table)})
			worst = max(worst, kitCompare(t, ggml.BytesF32(ref[0]), ggml.BytesF32(got[0]), 2e-6, "rope_kv_paged qkv"))
			if ty == ggml.F32 {
				worst = max(worst, kitCompare(t, ggml.BytesF32(ref[2]), ggml.BytesF32(got[2]), 2e-6, "rope_kv_paged k"))
				worst = max(worst, kitCompare(t, ggml.BytesF32(ref[3]), ggml.BytesF32(got[3]), 0, "rope_kv_paged v"))
			} else {
				worst = max(worst, kitCompare(t, kitAsF16(ref[2]), kitAsF16(got[2]), 1e-3, "rope_kv_paged k f16"))
				worst = max(worst, kitCompare(t, kitAsF16(ref[3]), kitAsF16(got[3]), 0, "rope_kv_paged v f16"))
			}
		}
	}
	t.Logf("rope_kv_paged: worst relative error %.3g", worst)
}

// AttentionPaged: each row attends over keys 0..pos[t] of its own blocks
// (NaN in every block it does not own).
func TestAttentionPagedKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 2))
	worst := 0.0
	for _, c := range pagedCases {
		for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
			worst = max(worst, checkAttentionPaged(t, r, c.hd, c.nHead, c.nKV, c.bs, c.ts, c.window, c.pos, ty, 2))
		}
	}
	t.Logf("attention_paged: worst relative error %.3g", worst)
}

// checkAttentionPaged runs one AttentionPaged dispatch (a pool with holes
// unowned blocks) on the CPU and the executor and returns the worst
// relative error of the output against the CPU's float64 reference.
func checkAttentionPaged(t *testing.T, r *rand.Rand, hd, nHead, nKV, bs, ts, window int, pos []int32, ty ggml.Type, holes int) float64 {
	t.Helper()
	return checkAttentionPagedPool(t, r, newPagedPoolHoles(r, hd, nKV, bs, ts, pos, holes), nHead, window, ty, nHead*hd+5)
}

// checkAttentionPagedPool is checkAttentionPaged over pool p, q rows ldq
// floats apart.
func checkAttentionPagedPool(t *testing.T, r *rand.Rand, p *pagedPool, nHead, window int, ty ggml.Type, ldq int) float64 {
	t.Helper()
	hd, nKV, bs, ts, pos := p.hd, p.nKV, p.bs, p.ts, p.pos
	m := len(pos)
	ldo := nHead*hd + 1
	d := plan.AttentionPagedArgs{Type: ty, HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldq: ldq, Ldo: ldo,
		Scale: float32(1 / math.Sqrt(float64(hd))), HeadStride: p.hs, PosStride: p.ps, BlockSize: bs,
		BlockStride: p.bstride, NBlocks: p.nBlocks, TableStride: ts, Window: window}.Dispatch()
	ref, got := kitRun(t, d, [][]byte{kitF32(kitRand(r, (m-1)*ldq+nHead*hd, 1)), p.cells(r, ty, true), p.cells(r, ty, true),
		kitF32(kitNaNs((m-1)*ldo + nHead*hd)), kitI32(pos), kitI32(p.table)})
	return kitCompare(t, ggml.BytesF32(ref[3]), ggml.BytesF32(got[3]), 2e-5, "attention_paged")
}

// A row whose table names a block outside the pool is skipped by the
// kernels (rope: its row and every cell stay as they were; attention: a
// zero output) while the other rows come out as the CPU makes them alone
// (the CPU refuses such a dispatch outright).
func TestPagedKernelsBadRow(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 3))
	hd, nHead, nKV, bs, ts := 32, 4, 2, 4, 4
	p := newPagedPool(r, hd, nKV, bs, ts, []int32{5, 9})
	p.table[ts] = int32(p.nBlocks + 1) // row 1's first block is outside the pool
	w := (nHead + 2*nKV) * hd
	qkv := kitF32(kitRand(r, 2*w, 1))
	kc, vc := p.cells(r, ggml.F32, true), p.cells(r, ggml.F32, true)
	rope := func(m int) plan.Dispatch {
		return plan.RopeKVPagedArgs{Type: ggml.F32, HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldqkv: w, HeadStride: p.hs, PosStride: p.ps,
			BlockSize: bs, BlockStride: p.bstride, NBlocks: p.nBlocks, TableStride: ts}.Dispatch()
	}
	freqs := kitF32(ropeFreqs(hd, 10000))
	both := kitRunOn(t, kitBackend(t), rope(2), [][]byte{qkv, freqs, kc, vc, kitI32(p.pos), kitI32(p.table)}, nil)
	one, _ := kitRun(t, rope(1), [][]byte{qkv[:4*w], freqs, kc, vc, kitI32(p.pos[:1]), kitI32(p.table[:ts])})
	kitCompare(t, ggml.BytesF32(one[0]), ggml.BytesF32(both[0][:4*w]), 2e-6, "good row's qkv")
	require.Equal(t, qkv[4*w:], both[0][4*w:], "bad row's qkv untouched")
	kitCompare(t, ggml.BytesF32(one[2]), ggml.BytesF32(both[2]), 2e-6, "k pool: only the good row's cells written")
	require.Equal(t, one[3], both[3], "v pool: only the good row's cells written")

	attn := func(m int) plan.Dispatch {
		return plan.AttentionPagedArgs{Type: ggml.F32, HeadDim: hd, NHead: nHead, NKV: nKV, M: m, Ldq: w, Ldo: nHead * hd, Scale: 0.2,
			HeadStride: p.hs, PosStride: p.ps, BlockSize: bs, BlockStride: p.bstride, NBlocks: p.nBlocks, TableStride: ts}.Dispatch()
	}
	o := nHead * hd
	gotA := kitRunOn(t, kitBackend(t), attn(2), [][]byte{qkv, kc, vc, kitF32(kitNaNs(2 * o)), kitI32(p.pos), kitI32(p.table)}, nil)
	oneA, _ := kitRun(t, attn(1), [][]byte{qkv[:4*w], kc, vc, kitF32(kitNaNs(o)), kitI32(p.pos[:1]), kitI32(p.table[:ts])})
	kitCompare(t, ggml.BytesF32(oneA[3]), ggml.BytesF32(gotA[3][:4*o]), 2e-5, "good row's attention")
	require.Equal(t, make([]float32, o), ggml.BytesF32(gotA[3][4*o:]), "bad row's output is zero")
}

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// pagedCase is M sequences at their own positions over one pool of
// blocks, each with its own (scrambled) block table.
type pagedCase struct {
	name              string
	typ               ggml.Type
	hd, nHead, nKV    int
	bs, ts, nBlocks   int
	pos               []int32
	window            int
	mode              plan.RopeMode
	hs, ps, bstride   int
	tables            []int32
	ldqkv, ldo, ropeD int
}

func (c *pagedCase) layout(r *rand.Rand) {
	c.ps = c.hd + 1 // padded slots, to catch a stride mixed up with hd
	c.hs = c.bs*c.ps + 2
	c.bstride = c.nKV*c.hs + 3
	c.ldqkv = (c.nHead+2*c.nKV)*c.hd + 5
	c.ldo = c.nHead*c.hd + 1
	c.ropeD = c.hd - 2
	// every row gets distinct blocks, in a shuffled order; entries past
	// a row's position name no block of the pool (they must not be read)
	perm := r.Perm(c.nBlocks)
	c.tables = make([]int32, len(c.pos)*c.ts)
	n := 0
	for t, p := range c.pos {
		for i := range c.ts {
			c.tables[t*c.ts+i] = int32(c.nBlocks + 5)
			if i <= int(p)/c.bs {
				c.tables[t*c.ts+i] = int32(perm[n])
				n++
			}
		}
	}
}

func (c *pagedCase) at(t, h, p int) int {
	return int(c.tables[t*c.ts+p/c.bs])*c.bstride + h*c.hs + (p%c.bs)*c.ps
}

func TestPagedDecode(t *testing.T) {
	cases := []pagedCase{
		{name: "gqa_f16", typ: ggml.F16, hd: 34, nHead: 6, nKV: 2, bs: 3, ts: 5, nBlocks: 17, pos: []int32{0, 7, 13, 4}},
		{name: "mha_f32_neox", typ: ggml.F32, hd: 18, nHead: 3, nKV: 3, bs: 4, ts: 3, nBlocks: 7, pos: []int32{11, 2}, mode: plan.RopeNeoX},
		{name: "window_f16", typ: ggml.F16, hd: 16, nHead: 4, nKV: 1, bs: 2, ts: 6, nBlocks: 13, pos: []int32{9, 1}, window: 4},
		{name: "one_row", typ: ggml.F32, hd: 8, nHead: 2, nKV: 1, bs: 5, ts: 2, nBlocks: 3, pos: []int32{6}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(ci), 38))
			c.layout(r)
			m, hd := len(c.pos), c.hd
			qkv := randVec(r, m*c.ldqkv, 1)
			freqs := ropeFreqs(c.ropeD/2, 10000)
			poolN := c.nBlocks * c.bstride
			kInit, vInit := randVec(r, poolN, 1), randVec(r, poolN, 1)
			h := newHarness(t)
			kb, vb := h.buf("k", f16Bytes(kInit)), h.buf("v", f16Bytes(vInit))
			if c.typ == ggml.F32 {
				kb, vb = h.f32("k", kInit), h.f32("v", vInit)
			} else {
				kInit, vInit = roundF16(kInit), roundF16(vInit)
			}
			qb, fb := h.f32("qkv", qkv), h.f32("freqs", freqs)
			pb, tb := h.i32("pos", c.pos), h.i32("tables", c.tables)
			ob := h.nan("out", (m-1)*c.ldo+c.nHead*hd)
			h.add(plan.RopeKVPagedArgs{Type: c.typ, QKV: bind(qb), Freqs: bind(fb), KCache: bind(kb), VCache: bind(vb), Pos: bind(pb), Table: bind(tb),
				HeadDim: hd, NHead: c.nHead, NKV: c.nKV, M: m, Ldqkv: c.ldqkv, Mode: c.mode, RopeDim: c.ropeD, HeadStride: c.hs, PosStride: c.ps,
				BlockSize: c.bs, BlockStride: c.bstride, NBlocks: c.nBlocks, TableStride: c.ts}.Dispatch())
			scale := float32(1 / math.Sqrt(float64(hd)))
			h.add(plan.AttentionPagedArgs{Type: c.typ, Q: bind(qb), K: bind(kb), V: bind(vb), Out: bind(ob), Pos: bind(pb), Table: bind(tb),
				HeadDim: hd, NHead: c.nHead, NKV: c.nKV, M: m, Ldq: c.ldqkv, Ldo: c.ldo, Scale: scale, HeadStride: c.hs, PosStride: c.ps,
				BlockSize: c.bs, BlockStride: c.bstride, NBlocks: c.nBlocks, TableStride: c.ts, Window: c.window}.Dispatch())
			h.run(plan.Vars{})
			// the walks over keys and values look a row's table up once a
			// block, not once a key (a division and a load each); an f16
			// cache's keys and values share one walk
			walks := 2
			if c.typ == ggml.F16 {
				walks = 1
			}
			spans := 0
			for _, p := range c.pos {
				nvis := int(p) + 1
				first := windowStart(int(p), c.window, nvis)
				spans += walks * c.nHead * ((nvis-1)/c.bs - first/c.bs + 1)
			}
			require.Equal(t, int64(spans), h.ex.pagedSpans.Load(), "block-table look-ups")

			// the reference: rotate each row at its own position, store
			// its K/V into its block, then attend over its own history
			wantK, wantV := toF64(kInit), toF64(vInit)
			rows := make([][]float64, m)
			for t := range m {
				rows[t] = toF64(qkv[t*c.ldqkv : t*c.ldqkv+(c.nHead+2*c.nKV)*hd])
				for hh := 0; hh < c.nHead+c.nKV; hh++ {
					refRope(rows[t][hh*hd:hh*hd+hd], int(c.pos[t]), freqs, c.ropeD, c.mode == plan.RopeNeoX, 1)
				}
				for kh := 0; kh < c.nKV; kh++ {
					dst := c.at(t, kh, int(c.pos[t]))
					for i := 0; i < hd; i++ {
						wantK[dst+i] = rows[t][(c.nHead+kh)*hd+i]
						wantV[dst+i] = rows[t][(c.nHead+c.nKV+kh)*hd+i]
						if c.typ == ggml.F16 {
							wantK[dst+i] = float64(roundF16([]float32{float32(wantK[dst+i])})[0])
							wantV[dst+i] = float64(roundF16([]float32{float32(wantV[dst+i])})[0])
						}
					}
				}
			}
			want := make([]float64, m*c.nHead*hd)
			for t := range m {
				q := make([]float32, c.nHead*hd)
				for i := range q {
					q[i] = float32(rows[t][i])
				}
				K := func(_, kh, p, i int) float64 { return wantK[c.at(t, kh, p)+i] }
				V := func(_, kh, p, i int) float64 { return wantV[c.at(t, kh, p)+i] }
				o, _ := refAttention(q, 0, 1, c.nHead, c.nKV, hd, K, V, int(c.pos[t])+1, int(c.pos[t]), c.window, true, false, float64(scale))
				copy(want[t*c.nHead*hd:], o)
			}
			checkOut(t, h.readF32(ob), want, m, c.ldo, c.nHead*hd, 2e-4, "attention")
			gotQKV := h.readF32(qb)
			for row := range m {
				for i := 0; i < (c.nHead+c.nKV)*hd; i++ {
					w := rows[row][i]
					require.InDelta(t, w, gotQKV[row*c.ldqkv+i], 2e-6*(1+math.Abs(w)), "rotated row %d elem %d", row, i)
				}
			}
			gotK, gotV := readCache(h, kb, c.typ), readCache(h, vb, c.typ)
			tol := 2e-6
			if c.typ == ggml.F16 {
				tol = 1e-3
			}
			for i := range gotK {
				require.InDelta(t, wantK[i], gotK[i], tol*(1+math.Abs(wantK[i])), "k pool element %d", i)
				require.InDelta(t, wantV[i], gotV[i], tol*(1+math.Abs(wantV[i])), "v pool element %d", i)
			}
		})
	}
}

func readCache(h *harness, b plan.BufID, typ ggml.Type) []float64 {
	if typ == ggml.F32 {
		return toF64(h.readF32(b))
	}
	var v []float64
	for _, u := range bytesU16(h.read(b)) {
		v = append(v, float64(ggml.FP16ToFP32(u)))
	}
	return v
}

// Block tables are data: a row that names a block outside the pool, or
// sits past its table, is refused rather than read or written.
func TestPagedHostileTables(t *testing.T) {
	hd, nHead, nKV, bs, ts, nBlocks := 8, 2, 1, 4, 2, 3
	bstride := nKV * bs * hd
	for _, tc := range []struct {
		name  string
		pos   []int32
		table []int32
		msg   string
	}{
		{"block_outside_pool", []int32{5}, []int32{0, 3}, "outside the pool"},
		{"negative_block", []int32{1}, []int32{-1, 0}, "outside the pool"},
		{"past_table", []int32{8}, []int32{0, 1}, "outside its table"},
		{"negative_position", []int32{-1}, []int32{0, 1}, "outside its table"},
	} {
		for _, attn := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				h := newHarness(t)
				qb := h.f32("qkv", make([]float32, (nHead+2*nKV)*hd))
				kb, vb := h.f32("k", make([]float32, nBlocks*bstride)), h.f32("v", make([]float32, nBlocks*bstride))
				pb, tb := h.i32("pos", tc.pos), h.i32("table", tc.table)
				if attn {
					h.add(plan.AttentionPagedArgs{Type: ggml.F32, Q: bind(qb), K: bind(kb), V: bind(vb), Out: bind(h.nan("out", nHead*hd)), Pos: bind(pb), Table: bind(tb),
						HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Scale: 1, HeadStride: bs * hd, PosStride: hd,
						BlockSize: bs, BlockStride: bstride, NBlocks: nBlocks, TableStride: ts}.Dispatch())
				} else {
					h.add(plan.RopeKVPagedArgs{Type: ggml.F32, QKV: bind(qb), KCache: bind(kb), VCache: bind(vb), Pos: bind(pb), Table: bind(tb),
						HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, HeadStride: bs * hd, PosStride: hd,
						BlockSize: bs, BlockStride: bstride, NBlocks: nBlocks, TableStride: ts}.Dispatch())
				}
				h.load()
				err := h.ex.Run(0, &plan.Vars{})
				require.ErrorContains(t, err, tc.msg)
				require.Equal(t, make([]float32, nBlocks*bstride), h.readF32(kb), "nothing written")
			})
		}
	}
}

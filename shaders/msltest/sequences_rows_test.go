package msltest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
)

// pagedSeq is one sequence of a step: its length in the cache, and the
// positions of its rows in the step (a decode row, or a prompt chunk).
type pagedSeq struct {
	len  int
	rows []int32
	// shares is the sequence whose first blocks this one's table starts
	// with (a shared prompt prefix; -1: none), and how many
	shares, sharedBlocks int
}

func chunk(from, n int) []int32 {
	r := make([]int32, n)
	for i := range r {
		r[i] = int32(from + i)
	}
	return r
}

// newPagedSeqPool is newPagedPool for rows that are sequences' chunks:
// every row of a sequence carries that sequence's table (shuffled blocks,
// with prefixes shared where a sequence says so).
func newPagedSeqPool(r *rand.Rand, hd, nKV, bs, ts int, seqs []pagedSeq) *pagedPool {
	p := &pagedPool{hd: hd, nKV: nKV, bs: bs, ts: ts}
	used := 0
	for _, s := range seqs {
		used += (s.len+bs-1)/bs - s.sharedBlocks
	}
	p.nBlocks = used + 2
	p.ps = hd + 3
	p.hs = bs*p.ps + 1
	p.bstride = nKV*p.hs + 5
	perm := r.Perm(p.nBlocks)
	tables := make([][]int32, len(seqs))
	n := 0
	for i, s := range seqs {
		tb := make([]int32, ts)
		for b := range tb {
			tb[b] = int32(p.nBlocks + 7)
			switch {
			case b < s.sharedBlocks:
				tb[b] = tables[s.shares][b]
			case b < (s.len+bs-1)/bs:
				tb[b] = int32(perm[n])
				n++
			}
		}
		tables[i] = tb
		for _, ps := range s.rows {
			p.pos = append(p.pos, ps)
			p.table = append(p.table, tb...)
		}
	}
	return p
}

// AttentionPaged on steps with prompt chunks (attention_paged_rows from
// Tuning.AttnPagedRowsFrom rows): each row attends over keys 0..pos of its
// own sequence's blocks, whether its 8-row tile shares them or not.
func TestAttentionPagedRowsKernel(t *testing.T) {
	cases := []struct {
		hd, nHead, nKV, bs, ts, window int
		seqs                           []pagedSeq
	}{
		// three decode rows, then a 20-row chunk from mid-block (tiles
		// straddle the decode rows and the chunk)
		{64, 4, 2, 16, 6, 0, []pagedSeq{
			{len: 38, rows: []int32{37}, shares: -1}, {len: 16, rows: []int32{15}, shares: -1},
			{len: 51, rows: []int32{50}, shares: -1}, {len: 41, rows: chunk(21, 20), shares: -1}}},
		// GQA with odd sizes: a chunk first, a decode row, a chunk past 128 keys
		{34, 6, 2, 3, 45, 0, []pagedSeq{
			{len: 18, rows: chunk(5, 13), shares: -1}, {len: 9, rows: []int32{8}, shares: -1},
			{len: 131, rows: chunk(119, 12), shares: -1}}},
		// a long cache (more tiles than SIMD-groups), a sliding window that
		// starts at a different key for each row of the chunk, and a decode
		// row sharing the chunk's sequence's first blocks (a shared prefix)
		{16, 4, 1, 4, 90, 40, []pagedSeq{
			{len: 330, rows: chunk(300, 30), shares: -1}, {len: 200, rows: []int32{199}, shares: 0, sharedBlocks: 20},
			{len: 3, rows: chunk(0, 3), shares: -1}}},
		// two chunks of sequences sharing a prefix inside one tile, then a
		// chunk that is exactly one tile; f16 and f32 caches alike
		{80, 3, 3, 5, 30, 0, []pagedSeq{
			{len: 60, rows: chunk(55, 5), shares: -1}, {len: 50, rows: chunk(47, 3), shares: 0, sharedBlocks: 8},
			{len: 140, rows: chunk(132, 8), shares: -1}}},
	}
	r := rand.New(rand.NewPCG(38, 4))
	worst := 0.0
	for i, c := range cases {
		for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
			p := newPagedSeqPool(r, c.hd, c.nKV, c.bs, c.ts, c.seqs)
			worst = max(worst, checkAttentionPaged(t, r, p, ty, c.nHead, c.window, fmt.Sprintf("case %d %v", i, ty)))
		}
	}
	t.Logf("attention_paged_rows: worst relative error %.3g", worst)
}

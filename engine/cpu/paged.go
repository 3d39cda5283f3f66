package cpu

import (
	"sync/atomic"

	"github.com/harkapp/hark/engine/plan"
)

// pagedRows is what RopeKVPaged and AttentionPaged share: each row's
// position and block table over one pool of KV blocks.
type pagedRows struct {
	pos, table   []int32
	ts, bs       int // table stride, positions per block
	bstride      int // elements per block
	hs, ps       int // head and position strides inside a block
	kc, vc       typed
	hd, nHead    int
	nKV, nBlocks int
}

// at is the element offset of (row t, kv head h, position p); the rows'
// tables were checked by load, so every block is in the pool.
func (r *pagedRows) at(t, h, p int) int {
	b := int(r.table[t*r.ts+p/r.bs])
	return b*r.bstride + h*r.hs + (p%r.bs)*r.ps
}

// span is at(t, h, p) and the end of p's block, at most end: positions
// p..stop-1 lie ps apart from off, so a walk over keys looks the table up
// (and divides by the block size) once a block, not once a key.
func (r *pagedRows) span(t, h, p, end int) (off, stop int) {
	blk := p / r.bs
	off = int(r.table[t*r.ts+blk])*r.bstride + h*r.hs + (p-blk*r.bs)*r.ps
	return off, min(end, (blk+1)*r.bs)
}

// load reads the rows' positions and tables and the two caches, and checks
// every block a row can reach (positions 0..pos[t]) is in the pool: the
// tables are data, so no span check at load time can vouch for them.
func (e *Exec) loadPaged(d *plan.Dispatch, r *pagedRows, m, kSlot, posSlot int) error {
	var err error
	if r.pos, err = typedSlice[int32](e, d, posSlot, m); err != nil {
		return err
	}
	if r.table, err = typedSlice[int32](e, d, posSlot+1, satMul(m, r.ts)); err != nil {
		return err
	}
	if r.pos == nil || r.table == nil {
		return e.req(posSlot, false)
	}
	for t := range m {
		p := int(r.pos[t])
		if p < 0 || p/r.bs >= r.ts {
			return e.errf("row %d: position %d outside its table (%d blocks of %d)", t, p, r.ts, r.bs)
		}
		for _, b := range r.table[t*r.ts : t*r.ts+p/r.bs+1] {
			if b < 0 || int(b) >= r.nBlocks {
				return e.errf("row %d: block %d outside the pool of %d", t, b, r.nBlocks)
			}
		}
	}
	need := satMul(r.nBlocks, r.bstride)
	if r.kc, err = e.typedView(d, kSlot, need); err != nil {
		return err
	}
	r.vc, err = e.typedView(d, kSlot+1, need)
	return err
}

// pagedRopeTask rotates each row at its own position and stores its K and
// V into its own block.
type pagedRopeTask struct {
	r      pagedRows
	x      []float32
	ldx    int
	half   int
	neox   bool
	freqs  []float32
	mscale float32
	cs     [][]float32
}

func (k *pagedRopeTask) Do(w, lo, hi int) {
	hd, r := k.r.hd, &k.r
	for t := lo; t < hi; t++ {
		pos := int(r.pos[t])
		row := k.x[t*k.ldx:]
		if k.freqs != nil {
			rotateHeads(row, k.cs[w][:2*k.half], k.freqs, pos, r.nHead+r.nKV, hd, k.neox, k.mscale)
		}
		for h := 0; h < r.nKV; h++ {
			dst := r.at(t, h, pos)
			storeRow(r.kc, dst, row[(r.nHead+h)*hd:(r.nHead+h)*hd+hd])
			storeRow(r.vc, dst, row[(r.nHead+r.nKV+h)*hd:(r.nHead+r.nKV+h)*hd+hd])
		}
	}
}

// ropeKVPaged (plan.RopeKVPagedArgs).
func (e *Exec) ropeKVPaged(d *plan.Dispatch) error {
	p := plan.DecodeRopeKVPaged(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	if p.M == 0 {
		return nil
	}
	k := &e.pagedRopeT
	*k = pagedRopeTask{ldx: p.Ldqkv, r: pagedRows{ts: p.TableStride, bs: p.BlockSize, bstride: p.BlockStride,
		hs: p.HeadStride, ps: p.PosStride, hd: p.HeadDim, nHead: p.NHead, nKV: p.NKV, nBlocks: p.NBlocks}}
	k.neox, k.half, k.mscale = p.Mode == plan.RopeNeoX, p.RotDims()/2, p.MScale
	if k.mscale == 0 {
		k.mscale = 1
	}
	var err error
	if k.freqs, err = e.f32(d, 1, k.half); err != nil {
		return err
	}
	w := satMul(satAdd(p.NHead, satMul(2, p.NKV)), p.HeadDim)
	if k.x, err = e.f32(d, 0, extent(p.M, p.Ldqkv, w)); err != nil {
		return err
	}
	if err := e.loadPaged(d, &k.r, p.M, 2, 4); err != nil {
		return err
	}
	e.ensureWorker(p.RotDims() + 2)
	k.cs = e.wsf
	e.pool.Run(p.M, chunkGrain(w), k)
	*k = pagedRopeTask{}
	return nil
}

// pagedAttnTask is one (row, head) per item: the row's query against keys
// 0..pos[t] of its own blocks.
type pagedAttnTask struct {
	r        pagedRows
	q, out   []float32
	ldq, ldo int
	group    int
	window   int
	scale    float32
	scores   [][]float32
	kvs      [][]kvSpan // per worker: an f16 row's block spans
	// spans counts the block tables' look-ups, a block per walk over a
	// (row, head)'s keys or values (f16: one walk, which the values
	// share; tests bound the work by it)
	spans *atomic.Int64
}

func (a *pagedAttnTask) Do(w, lo, hi int) {
	r, hd := &a.r, a.r.hd
	var spans int64
	for it := lo; it < hi; it++ {
		t, h := it/r.nHead, it%r.nHead
		qpos := int(r.pos[t])
		nvis := qpos + 1
		first := windowStart(qpos, a.window, nvis)
		kvh := h / a.group
		q := a.q[t*a.ldq+h*hd : t*a.ldq+h*hd+hd]
		o := a.out[t*a.ldo+h*hd : t*a.ldo+h*hd+hd]
		s := a.scores[w][:nvis]
		clear(o)
		if r.kc.h != nil {
			// f16: the blocks' spans, shared by keys and values, then one
			// kernel call for the scores and one for the values
			sp := a.kvs[w][:0]
			for j := first; j < nvis; {
				off, stop := r.span(t, kvh, j, nvis)
				spans++
				sp = append(sp, kvSpan{off, stop - j})
				j = stop
			}
			keyScoresF16(s[first:nvis], q, r.kc.h, sp, r.ps, a.scale)
			softmaxScaled(s[first:nvis], 1)
			addValuesF16(o, s[first:nvis], r.vc.h, sp, r.ps)
			continue
		}
		// f32: a block's span of keys, then of values, a kernel call each
		for j := first; j < nvis; {
			off, stop := r.span(t, kvh, j, nvis)
			spans++
			keyScoresF32(s[j:stop], q, r.kc.f[off:], r.ps, a.scale)
			j = stop
		}
		softmaxScaled(s[first:nvis], 1)
		for j := first; j < nvis; {
			off, stop := r.span(t, kvh, j, nvis)
			spans++
			addValuesF32(o, s[j:stop], r.vc.f[off:], r.ps)
			j = stop
		}
	}
	a.spans.Add(spans)
}

// attentionPaged (plan.AttentionPagedArgs).
func (e *Exec) attentionPaged(d *plan.Dispatch) error {
	p := plan.DecodeAttentionPaged(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	if p.M == 0 || p.NHead == 0 {
		return nil
	}
	a := &e.pagedAttnT
	*a = pagedAttnTask{ldq: p.Ldq, ldo: p.Ldo, group: p.NHead / p.NKV, window: p.Window, scale: p.Scale,
		r: pagedRows{ts: p.TableStride, bs: p.BlockSize, bstride: p.BlockStride, hs: p.HeadStride, ps: p.PosStride,
			hd: p.HeadDim, nHead: p.NHead, nKV: p.NKV, nBlocks: p.NBlocks}}
	w := satMul(p.NHead, p.HeadDim)
	var err error
	if a.q, err = e.f32(d, 0, extent(p.M, p.Ldq, w)); err != nil {
		return err
	}
	if a.out, err = e.f32(d, 3, extent(p.M, p.Ldo, w)); err != nil {
		return err
	}
	if err := e.loadPaged(d, &a.r, p.M, 1, 4); err != nil {
		return err
	}
	longest := 0
	for _, ps := range a.r.pos {
		longest = max(longest, int(ps)+1)
	}
	if longest > maxKV {
		return e.errf("position %d beyond the supported %d keys", longest-1, maxKV)
	}
	e.ensureWorker(longest)
	a.scores = e.wsf
	e.ensureSpans(longest/p.BlockSize + 2)
	a.kvs = e.wss
	a.spans = &e.pagedSpans
	e.pool.Run(p.M*p.NHead, attnGrain(p.M*p.NHead, e.pool.Workers(), satMul(longest, 2*p.HeadDim)), a)
	*a = pagedAttnTask{}
	return nil
}

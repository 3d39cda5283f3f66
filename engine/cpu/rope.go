package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// ropeTask rotates the heads of m rows (Rope), and for RopeKV also stores
// each row's K and V heads into the caches.
type ropeTask struct {
	x            []float32
	ldx          int
	hd, nRot     int // head size; heads rotated per row (Q, plus K for RopeKV)
	half         int // ropeDim/2
	neox, perSeq bool
	pos0         int
	freqs        []float32 // nil: no rotation
	mscale       float32
	cs           [][]float32
	kv           bool
	nHead, nKV   int
	kc, vc       typed
	hs, ps, ss   int
}

func (k *ropeTask) Do(w, lo, hi int) {
	hd := k.hd
	for t := lo; t < hi; t++ {
		pos, seq := k.pos0+t, 0
		if k.perSeq {
			pos, seq = k.pos0, t
		}
		row := k.x[t*k.ldx:]
		if k.freqs != nil {
			rotateHeads(row, k.cs[w][:2*k.half], k.freqs, pos, k.nRot, hd, k.neox, k.mscale)
		}
		if !k.kv {
			continue
		}
		for h := 0; h < k.nKV; h++ {
			dst := seq*k.ss + h*k.hs + pos*k.ps
			kv := row[(k.nHead+h)*hd : (k.nHead+h)*hd+hd]
			vv := row[(k.nHead+k.nKV+h)*hd : (k.nHead+k.nKV+h)*hd+hd]
			storeRow(k.kc, dst, kv)
			storeRow(k.vc, dst, vv)
		}
	}
}

// rotateHeads rotates the first nRot heads of hd in row at position pos,
// with cs as room for the (cos, sin) pairs.
func rotateHeads(row, cs, freqs []float32, pos, nRot, hd int, neox bool, mscale float32) {
	half := len(cs) / 2
	for i := 0; i < half; i++ {
		// The angle in float64: pos·freq loses digits in float32 at long
		// contexts.
		s, c := math.Sincos(float64(pos) * float64(freqs[i]))
		cs[2*i], cs[2*i+1] = float32(c)*mscale, float32(s)*mscale
	}
	for h := 0; h < nRot; h++ {
		v := row[h*hd : h*hd+hd]
		if neox {
			rotNeoX(v, cs, half)
		} else {
			rotNormal(v, cs, half)
		}
	}
}

func rotNormal(v, cs []float32, half int) {
	for i := 0; i < half; i++ {
		c, s := cs[2*i], cs[2*i+1]
		a, b := v[2*i], v[2*i+1]
		v[2*i], v[2*i+1] = a*c-b*s, a*s+b*c
	}
}

func rotNeoX(v, cs []float32, half int) {
	for i := 0; i < half; i++ {
		c, s := cs[2*i], cs[2*i+1]
		a, b := v[i], v[i+half]
		v[i], v[i+half] = a*c-b*s, a*s+b*c
	}
}

// storeRow writes src at element dst of a cache.
func storeRow(c typed, dst int, src []float32) {
	if c.h != nil {
		halfRow(c.h[dst:dst+len(src)], src)
		return
	}
	copy(c.f[dst:dst+len(src)], src)
}

// ropeSetup fills the rotation part of the task shared by Rope and RopeKV,
// whose Check has accepted the head size, rope dims and mode.
func (e *Exec) ropeSetup(d *plan.Dispatch, k *ropeTask, freqSlot int, mode plan.RopeMode, ropeDim int, ms float32) error {
	k.neox = mode == plan.RopeNeoX
	k.half = ropeDim / 2
	if ms == 0 {
		ms = 1
	}
	k.mscale = ms
	var err error
	if k.freqs, err = e.f32(d, freqSlot, k.half); err != nil {
		return err
	}
	e.ensureWorker(ropeDim)
	k.cs = e.wsf
	return nil
}

// rope (plan.RopeArgs). RopeDim 0 means the whole head.
func (e *Exec) rope(d *plan.Dispatch) error {
	p := plan.DecodeRope(d)
	hd, nHead, m, ldx := p.HeadDim, p.NHead, p.M, p.Ldx
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	if m == 0 || nHead == 0 {
		return nil
	}
	k := &e.ropeT
	*k = ropeTask{ldx: ldx, hd: hd, nRot: nHead, pos0: p.Pos0, perSeq: p.Flags&plan.FlagPerSeqRows != 0}
	if err := e.ropeSetup(d, k, 1, p.Mode, p.RotDims(), p.MScale); err != nil {
		return err
	}
	w := satMul(nHead, hd)
	var err error
	if k.x, err = e.f32(d, 0, extent(m, ldx, w)); err != nil {
		return err
	}
	e.pool.Run(m, chunkGrain(w), k)
	k.x, k.freqs, k.cs = nil, nil, nil
	return nil
}

// ropeKV (plan.RopeKVArgs). K is rotated in the qkv row as well as in the
// cache.
func (e *Exec) ropeKV(d *plan.Dispatch) error {
	p := plan.DecodeRopeKV(d)
	hd, nHead, nKV, m, ldx := p.HeadDim, p.NHead, p.NKV, p.M, p.Ldqkv
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	if m == 0 {
		return nil
	}
	k := &e.ropeT
	*k = ropeTask{ldx: ldx, hd: hd, nRot: nHead + nKV, pos0: p.Pos0, perSeq: p.Flags&plan.FlagPerSeqRows != 0,
		kv: true, nHead: nHead, nKV: nKV, hs: p.HeadStride, ps: p.PosStride, ss: p.SeqStride}
	if err := e.ropeSetup(d, k, 1, p.Mode, p.RotDims(), p.MScale); err != nil {
		return err
	}
	w := satMul(satAdd(nHead, satMul(2, nKV)), hd)
	var err error
	if k.x, err = e.f32(d, 0, extent(m, ldx, w)); err != nil {
		return err
	}
	seqs, lastPos := 1, satAdd(k.pos0, m-1)
	if k.perSeq {
		seqs, lastPos = m, k.pos0
	}
	need := 0
	if nKV > 0 {
		need = cacheExtent(seqs, k.ss, nKV, k.hs, lastPos+1, k.ps, hd)
	}
	if k.kc, err = e.typedView(d, 2, need); err != nil {
		return err
	}
	if k.vc, err = e.typedView(d, 3, need); err != nil {
		return err
	}
	e.pool.Run(m, chunkGrain(w), k)
	*k = ropeTask{}
	return nil
}

// cacheExtent is the number of elements a cache region spans: seqs
// sequences, heads heads, positions 0..npos-1, hd dims each.
func cacheExtent(seqs, ss, heads, hs, npos, ps, hd int) int {
	if seqs <= 0 || heads <= 0 || npos <= 0 || hd <= 0 {
		return 0
	}
	return satAdd(satAdd(satAdd(satMul(seqs-1, ss), satMul(heads-1, hs)), satMul(npos-1, ps)), hd)
}

package cpu

import "github.com/harkapp/hark/engine/plan"

// ropeAttention (plan.RopeAttentionArgs): RopeKV on a copy of the qkv rows
// (the contract leaves the rows unchanged), storing K and V into the
// caches, then Attention with the copy's rotated Q heads as q.
func (e *Exec) ropeAttention(d *plan.Dispatch) error {
	p := plan.DecodeRopeAttention(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	hd, nHead, nKV, m := p.HeadDim, p.NHead, p.NKV, p.M
	if m == 0 || nHead == 0 {
		return nil
	}
	perSeq := p.Flags&plan.FlagPerSeqRows != 0
	w := satMul(satAdd(nHead, satMul(2, nKV)), hd)
	src, err := e.f32(d, 0, extent(m, p.Ldq, w))
	if err != nil {
		return err
	}
	rows := e.ensureAct(satMul(m, w))
	for t := range m {
		copy(rows[t*w:(t+1)*w], src[t*p.Ldq:])
	}
	k := &e.ropeT
	*k = ropeTask{x: rows, ldx: w, hd: hd, nRot: nHead + nKV, pos0: p.Pos0, perSeq: perSeq,
		kv: true, nHead: nHead, nKV: nKV, hs: p.HeadStride, ps: p.PosStride, ss: p.SeqStride}
	if err := e.ropeSetup(d, k, 4, p.Mode, p.RotDims(), 0); err != nil {
		return err
	}
	seqs, lastPos := 1, satAdd(k.pos0, m-1)
	if perSeq {
		seqs, lastPos = m, k.pos0
	}
	need := cacheExtent(seqs, k.ss, nKV, k.hs, max(lastPos+1, p.KVLen), k.ps, hd)
	if k.kc, err = e.typedView(d, 1, need); err != nil {
		return err
	}
	if k.vc, err = e.typedView(d, 2, need); err != nil {
		return err
	}
	e.pool.Run(m, chunkGrain(w), k)
	*k = ropeTask{}
	a := &e.attnT
	*a = attnTask{q: rows, hd: hd, nHead: nHead, m: m, ldq: w, ldo: p.Ldo,
		kvLen: p.KVLen, pos0: p.Pos0, window: p.Window, causal: p.Flags&plan.FlagCausal != 0, perSeq: perSeq,
		scale: p.Scale, hs: p.HeadStride, ps: p.PosStride, ss: p.SeqStride}
	err = e.attend(d, a, nKV, false)
	*a = attnTask{}
	return err
}

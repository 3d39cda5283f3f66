package cpu

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// prodArgs are the checked operands of a matrix product dispatch.
type prodArgs struct {
	w              []byte
	n, k, m        int
	out, bias, res []float32
	ldo, ldr       int
}

// prodOperands checks the weight, output, bias and residual of a product
// (the Product layout family's).
func (e *Exec) prodOperands(d *plan.Dispatch) (prodArgs, error) {
	p := plan.DecodeProduct(d)
	a := prodArgs{n: p.N, k: p.K, m: p.M, ldo: p.Ldo, ldr: p.Ldr}
	if a.m == 1 { // a single row's stride is meaningless; the product wants ld >= n
		a.ldo, a.ldr = max(a.ldo, a.n), max(a.ldr, a.n)
	}
	rb, err := ggml.RowBytes(d.Type, int64(a.k))
	if err != nil {
		return a, e.errf("weight rows: %v", err)
	}
	if a.m > 1 && a.ldo < a.n {
		return a, e.errf("ldo %d smaller than n %d", a.ldo, a.n)
	}
	if a.w, err = e.bytes(d, 0, satMul(a.n, int(rb))); err != nil {
		return a, err
	}
	if a.out, err = e.f32(d, 2, extent(a.m, a.ldo, a.n)); err != nil {
		return a, err
	}
	if a.bias, err = e.f32(d, 3, a.n); err != nil {
		return a, err
	}
	if present(d, 4) {
		if a.m > 1 && a.ldr < a.n {
			return a, e.errf("ldr %d smaller than n %d", a.ldr, a.n)
		}
		if a.res, err = e.f32(d, 4, extent(a.m, a.ldr, a.n)); err != nil {
			return a, err
		}
	}
	return a, nil
}

// mul runs a product dispatch's multiplication. A quantized dot-product
// one may return with its helpers still running (MatMul.async): the plan's
// next dependent dispatch fences first (fences), and its own scratch x is
// quantized into the product's ring entry before mul returns.
func (e *Exec) mul(d *plan.Dispatch, a *prodArgs, x []float32, ldx int) error {
	e.mm.async = true
	defer func() { e.mm.async = false }()
	if err := e.mm.Mul(d.Type, a.w, a.n, a.k, a.m, x, ldx, a.out, a.ldo, a.bias, a.res, a.ldr); err != nil {
		return e.errf("%v", err)
	}
	return nil
}

// matProduct runs MatVec and MatMul: out = x·Wᵀ + bias + res.
func (e *Exec) matProduct(d *plan.Dispatch) error {
	a, err := e.prodOperands(d)
	if err != nil || a.n == 0 || a.m == 0 {
		return err
	}
	ldx := plan.DecodeProduct(d).Ldx
	if a.m == 1 {
		ldx = max(ldx, a.k)
	}
	if ldx < a.k {
		return e.errf("ldx %d smaller than k %d", ldx, a.k)
	}
	x, err := e.f32(d, 1, extent(a.m, ldx, a.k))
	if err != nil {
		return err
	}
	if err := e.mul(d, &a, x, ldx); err != nil {
		return err
	}
	if d.Kernel != plan.MatVec || plan.DecodeMatVec(d).Flags&plan.FlagGELUOut == 0 {
		return nil
	}
	// MatVec's FlagGELUOut (no residual: the plan's checks): GELU over the
	// finished rows in place, as the GPU's epilogue applies it; the
	// product may still be running (mul), so fence first
	e.pool.Fence()
	return e.runEW(d, ewGELUErf, a.n, a.m, plan.SlotMatVecOut, a.ldo, -1, 0, plan.SlotMatVecOut, a.ldo, 0)
}

// rmsNormMatVec normalises the m input rows into scratch, then multiplies;
// the normalised rows never reach a plan buffer.
func (e *Exec) rmsNormMatVec(d *plan.Dispatch) error {
	a, err := e.prodOperands(d)
	if err != nil || a.n == 0 || a.m == 0 {
		return err
	}
	p := plan.DecodeRMSNormMatVec(d)
	ldx := p.Ldx
	if a.m > 1 && ldx < a.k {
		return e.errf("ldx %d smaller than k %d", ldx, a.k)
	}
	x, err := e.f32(d, 1, extent(a.m, ldx, a.k))
	if err != nil {
		return err
	}
	g, err := e.f32(d, 5, a.k)
	if err != nil {
		return err
	}
	act := e.ensureAct(satMul(a.m, a.k))
	nt := &e.normT
	*nt = normTask{x: x, out: act, w: g, dim: a.k, inner: 1, ldx: ldx, ldo: a.k, eps: p.Eps}
	e.pool.Run(a.m, chunkGrain(a.k), nt)
	nt.x, nt.out, nt.w = nil, nil, nil
	return e.mul(d, &a, act, a.k)
}

// layerNormMatVec normalises the m input rows into scratch with
// LayerNorm's arithmetic (the same rows a LayerNorm dispatch would write),
// then multiplies as MatVec, FlagGELUOut included: the plan's LayerNorm
// and MatVec in one dispatch, the normalised rows never in a plan buffer.
func (e *Exec) layerNormMatVec(d *plan.Dispatch) error {
	p := plan.DecodeLayerNormMatVec(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	a, err := e.prodOperands(d)
	if err != nil || a.n == 0 || a.m == 0 {
		return err
	}
	ldx := p.Ldx
	if a.m == 1 {
		ldx = max(ldx, a.k)
	}
	x, err := e.f32(d, plan.SlotLayerNormMatVecX, extent(a.m, ldx, a.k))
	if err != nil {
		return err
	}
	g, err := e.f32(d, plan.SlotLayerNormMatVecG, a.k)
	if err != nil {
		return err
	}
	b, err := e.f32(d, plan.SlotLayerNormMatVecB, a.k)
	if err != nil {
		return err
	}
	act := e.ensureAct(satMul(a.m, a.k))
	nt := &e.normT
	*nt = normTask{x: x, out: act, w: g, b: b, dim: a.k, inner: 1, ldx: ldx, ldo: a.k, eps: p.Eps, layer: true}
	e.pool.Run(a.m, chunkGrain(a.k), nt)
	nt.x, nt.out, nt.w, nt.b = nil, nil, nil, nil
	if err := e.mul(d, &a, act, a.k); err != nil || p.Flags&plan.FlagGELUOut == 0 {
		return err
	}
	// GELU over the finished rows in place, as matProduct does for MatVec
	e.pool.Fence()
	return e.runEW(d, ewGELUErf, a.n, a.m, plan.SlotLayerNormMatVecOut, a.ldo, -1, 0, plan.SlotLayerNormMatVecOut, a.ldo, 0)
}

// gatedMatVec computes act(gate)⊙up (op ewSiLUMul or ewGELUMul) into
// scratch, then multiplies: SiLUMulMatVec and GELUMulMatVec (the Gated
// layout family).
func (e *Exec) gatedMatVec(d *plan.Dispatch, op ewOp) error {
	a, err := e.prodOperands(d)
	if err != nil || a.n == 0 || a.m == 0 {
		return err
	}
	p := plan.DecodeGated(d)
	ldg, ldu := p.Ldg, p.Ldu
	if a.m > 1 && (ldg < a.k || ldu < a.k) {
		return e.errf("row strides (%d, %d) smaller than k %d", ldg, ldu, a.k)
	}
	k := &e.ewT
	*k = ewTask{op: op, n: a.k, lda: ldg, ldb: ldu, ldo: a.k}
	if k.a, err = e.f32(d, 1, extent(a.m, ldg, a.k)); err != nil {
		return err
	}
	if k.b, err = e.f32(d, 5, extent(a.m, ldu, a.k)); err != nil {
		return err
	}
	k.out = e.ensureAct(satMul(a.m, a.k))
	e.pool.Run(a.m, chunkGrain(a.k), k)
	act := k.out
	k.a, k.b, k.out = nil, nil, nil
	return e.mul(d, &a, act, a.k)
}

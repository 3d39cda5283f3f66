package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// normTask normalises rows for RMSNorm, LayerNorm and the norm halves of
// RMSNormMatVec and LayerNormMatVec. Row r lives at (r/inner)*ld + (r%inner)*dim.
type normTask struct {
	x, out, w, b []float32
	dim, inner   int
	ldx, ldo     int
	eps          float32
	layer        bool
}

func (k *normTask) Do(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		g, s := r/k.inner, (r%k.inner)*k.dim
		x := k.x[g*k.ldx+s : g*k.ldx+s+k.dim]
		o := k.out[g*k.ldo+s : g*k.ldo+s+k.dim]
		if k.layer {
			layerNormRow(x, o, k.w, k.b, k.eps)
		} else {
			rmsNormRow(x, o, k.w, k.eps)
		}
	}
}

// rmsNormRow writes x/rms(x)⊙w into o (o may alias x; w nil = no scale).
// The sum of squares is accumulated in float64, as ggml does.
func rmsNormRow(x, o, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	if w == nil {
		for i, v := range x {
			o[i] = v * scale
		}
		return
	}
	w = w[:len(x)]
	o = o[:len(x)]
	for i, v := range x {
		o[i] = v * scale * w[i]
	}
}

// layerNormRow writes (x-mean)/sqrt(var+eps)⊙w+b into o (biased variance).
func layerNormRow(x, o, w, b []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := sum / float64(len(x))
	var ss float64
	for _, v := range x {
		d := float64(v) - mean
		ss += d * d
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	m := float32(mean)
	o = o[:len(x)]
	for i, v := range x {
		y := (v - m) * scale
		if w != nil {
			y *= w[i]
		}
		if b != nil {
			y += b[i]
		}
		o[i] = y
	}
}

// rowsExtent is the span of rows grouped inner to a stride-ld group.
func rowsExtent(rows, inner, dim, ld int) int {
	if rows <= 0 || dim <= 0 {
		return 0
	}
	last := rows - 1
	return satAdd(satAdd(satMul(last/inner, ld), satMul(last%inner, dim)), dim)
}

func (e *Exec) rmsNorm(d *plan.Dispatch) error {
	p := plan.DecodeRMSNorm(d)
	dim, rows, ldx, ldo := p.Dim, p.Rows, p.Ldx, p.Ldo
	inner := max(1, p.Inner)
	if rows == 0 || dim == 0 {
		return nil
	}
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	x, err := e.f32(d, 0, rowsExtent(rows, inner, dim, ldx))
	if err != nil {
		return err
	}
	w, err := e.f32(d, 1, dim)
	if err != nil {
		return err
	}
	out, err := e.f32(d, 2, rowsExtent(rows, inner, dim, ldo))
	if err != nil {
		return err
	}
	k := &e.normT
	*k = normTask{x: x, out: out, w: w, dim: dim, inner: inner, ldx: ldx, ldo: ldo, eps: p.Eps}
	e.pool.Run(rows, chunkGrain(dim), k)
	k.x, k.out, k.w = nil, nil, nil
	return nil
}

func (e *Exec) layerNorm(d *plan.Dispatch) error {
	p := plan.DecodeLayerNorm(d)
	dim, rows, ldx, ldo := p.Dim, p.Rows, p.Ldx, p.Ldo
	if rows == 0 || dim == 0 {
		return nil
	}
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	x, err := e.f32(d, 0, extent(rows, ldx, dim))
	if err != nil {
		return err
	}
	w, err := e.f32(d, 1, dim)
	if err != nil {
		return err
	}
	b, err := e.f32(d, 2, dim)
	if err != nil {
		return err
	}
	out, err := e.f32(d, 3, extent(rows, ldo, dim))
	if err != nil {
		return err
	}
	k := &e.normT
	*k = normTask{x: x, out: out, w: w, b: b, dim: dim, inner: 1, ldx: ldx, ldo: ldo, eps: p.Eps, layer: true}
	e.pool.Run(rows, chunkGrain(dim), k)
	k.x, k.out, k.w, k.b = nil, nil, nil, nil
	return nil
}

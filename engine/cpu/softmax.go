package cpu

import (
	"github.com/harkapp/hark/engine/plan"
)

// softmaxTask: out[r] = softmax(scale·x[r]), max-subtracted for stability.
type softmaxTask struct {
	x, out   []float32
	n        int
	ldx, ldo int
	scale    float32
}

func (k *softmaxTask) Do(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		x := k.x[r*k.ldx : r*k.ldx+k.n]
		o := k.out[r*k.ldo : r*k.ldo+k.n]
		mx := maxScaled(x, k.scale)
		var sum float64
		for i, v := range x {
			e := exp32(v*k.scale - mx)
			o[i] = e
			sum += float64(e)
		}
		inv := float32(1 / sum)
		for i := range o {
			o[i] *= inv
		}
	}
}

func (e *Exec) softmax(d *plan.Dispatch) error {
	p := plan.DecodeSoftmax(d)
	n, m, ldx, ldo := p.N, p.M, p.Ldx, p.Ldo
	if n == 0 || m == 0 {
		return nil
	}
	if m > 1 && (ldx < n || ldo < n) {
		return e.errf("row strides (%d, %d) smaller than n %d", ldx, ldo, n)
	}
	k := &e.smT
	*k = softmaxTask{n: n, ldx: ldx, ldo: ldo, scale: p.Scale}
	var err error
	if k.x, err = e.f32(d, 0, extent(m, ldx, n)); err != nil {
		return err
	}
	if k.out, err = e.f32(d, 1, extent(m, ldo, n)); err != nil {
		return err
	}
	e.pool.Run(m, chunkGrain(n), k)
	k.x, k.out = nil, nil
	return nil
}

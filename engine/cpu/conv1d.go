package cpu

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Conv1D is computed as im2col tiles times the weight matrix: each output
// time step's receptive field, laid out as W's rows are ([cin][kw]), is one
// row of a matrix product with W (cout rows of cin·kw), so the convolution
// runs on the same optimised product as every linear layer.

// convTileFloats bounds the im2col tile (4 MiB); a variable so tests can
// force several tiles.
var convTileFloats = 1 << 20

func convTileRows(k int) int { return max(1, convTileFloats/max(k, 1)) }

type im2colTask struct {
	x         []float32
	cols      []float32
	cin, kw   int
	T         int
	stride    int
	pad       int
	ldx       int
	chanMajor bool
	to0       int
}

func (k *im2colTask) Do(_, lo, hi int) {
	kk := k.cin * k.kw
	for r := lo; r < hi; r++ {
		row := k.cols[r*kk : r*kk+kk]
		t0 := (k.to0+r)*k.stride - k.pad
		for ci := 0; ci < k.cin; ci++ {
			dst := row[ci*k.kw : ci*k.kw+k.kw]
			for j := range dst {
				t := t0 + j
				switch {
				case t < 0 || t >= k.T:
					dst[j] = 0
				case k.chanMajor:
					dst[j] = k.x[ci*k.ldx+t]
				default:
					dst[j] = k.x[t*k.ldx+ci]
				}
			}
		}
	}
}

// conv1d (plan.Conv1DArgs). The output has (T + 2·pad - kw)/stride + 1
// rows.
func (e *Exec) conv1d(d *plan.Dispatch) error {
	p := plan.DecodeConv1D(d)
	cin, cout, T, kw, stride, pad := p.Cin, p.Cout, p.T, p.Kw, p.Stride, p.Pad
	chanMajor := p.Flags&plan.FlagChannelMaj != 0
	ldx, ldo := p.Ldx, p.Ldo
	if cin == 0 || cout == 0 || kw == 0 || stride == 0 {
		return e.errf("empty convolution (cin %d, cout %d, kw %d, stride %d)", cin, cout, kw, stride)
	}
	span := satAdd(T, satMul(2, pad))
	if span < kw {
		return e.errf("input of %d steps (pad %d) shorter than the kernel %d", T, pad, kw)
	}
	tout := (span-kw)/stride + 1
	k := satMul(cin, kw)
	rb, err := ggml.RowBytes(d.Type, int64(k))
	if err != nil {
		return e.errf("weight rows: %v", err)
	}
	a := prodArgs{n: cout, k: k, ldo: ldo}
	if a.w, err = e.bytes(d, 0, satMul(cout, int(rb))); err != nil {
		return err
	}
	xm, xn := T, cin
	if chanMajor {
		xm, xn = cin, T
	}
	if xm > 1 && ldx < xn {
		return e.errf("ldx %d smaller than row length %d", ldx, xn)
	}
	x, err := e.f32(d, 1, extent(xm, ldx, xn))
	if err != nil {
		return err
	}
	if a.bias, err = e.f32(d, 2, cout); err != nil {
		return err
	}
	if tout == 1 {
		a.ldo = max(ldo, cout)
	}
	if tout > 1 && ldo < cout {
		return e.errf("ldo %d smaller than cout %d", ldo, cout)
	}
	out, err := e.f32(d, 3, extent(tout, ldo, cout))
	if err != nil {
		return err
	}
	tile := min(convTileRows(k), tout)
	cols := e.ensureAct(satMul(tile, k))
	ct := &e.colT
	*ct = im2colTask{x: x, cols: cols, cin: cin, kw: kw, T: T, stride: stride, pad: pad, ldx: ldx, chanMajor: chanMajor}
	defer func() { *ct = im2colTask{} }()
	for to0 := 0; to0 < tout; to0 += tile {
		rows := min(tile, tout-to0)
		ct.to0 = to0
		e.pool.Run(rows, chunkGrain(k), ct)
		a.m = rows
		a.out = out[to0*ldo:]
		if err := e.mul(d, &a, cols[:rows*k], k); err != nil {
			return err
		}
	}
	return nil
}

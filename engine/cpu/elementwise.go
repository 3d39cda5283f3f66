package cpu

import (
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// ewOp selects the row operation of an ewTask.
type ewOp uint8

const (
	ewSiLUMul ewOp = iota
	ewGELUMul      // gelu_tanh(a) ⊙ b (Gemma's gated FFN)
	ewGELUErf
	ewGELUTanh
	ewAdd
	ewScale
	ewCopyF32
	ewCopyF16
	ewCopyBF16
)

// ewTask applies an element-wise operation to m rows of n, each operand
// with its own row stride (0 for b broadcasts its first row).
type ewTask struct {
	op            ewOp
	a, b, out     []float32
	h             []uint16 // f16/bf16 destination of Copy
	n             int
	lda, ldb, ldo int
	s             float32
}

func (k *ewTask) Do(_, lo, hi int) {
	n := k.n
	for r := lo; r < hi; r++ {
		a := k.a[r*k.lda : r*k.lda+n]
		switch k.op {
		case ewCopyF16:
			halfRow(k.h[r*k.ldo:r*k.ldo+n], a)
			continue
		case ewCopyBF16:
			h := k.h[r*k.ldo : r*k.ldo+n]
			for i, v := range a {
				h[i] = ggml.FP32ToBF16(v)
			}
			continue
		}
		o := k.out[r*k.ldo : r*k.ldo+n]
		switch k.op {
		case ewSiLUMul:
			siluMulRow(o, a, k.b[r*k.ldb:r*k.ldb+n])
		case ewGELUMul:
			b := k.b[r*k.ldb : r*k.ldb+n]
			for i, v := range a {
				o[i] = geluTanh(v) * b[i]
			}
		case ewGELUErf:
			geluErfRow(o, a)
		case ewGELUTanh:
			for i, v := range a {
				o[i] = geluTanh(v)
			}
		case ewAdd:
			b := k.b[r*k.ldb : r*k.ldb+n]
			for i, v := range a {
				o[i] = v + b[i]
			}
		case ewScale:
			s := k.s
			for i, v := range a {
				o[i] = v * s
			}
		case ewCopyF32:
			copy(o, a)
		}
	}
}

// geluErfRow sets o[i] = geluErf(a[i]); amd64 replaces it with an AVX2
// version of the same formula (the Whisper encoder's MLP applies it to
// every hidden value: it was a sixth of an encoder pass).
var geluErfRow = geluErfRowGeneric

func geluErfRowGeneric(o, a []float32) {
	o = o[:len(a)]
	for i, v := range a {
		o[i] = geluErf(v)
	}
}

func silu(x float32) float32 { return x / (1 + exp32(-x)) }

// geluErf is the exact GELU, x·Φ(x) = x/2·(1+erf(x/√2)), as PyTorch's
// nn.GELU() defines it. erf uses Abramowitz & Stegun 7.1.26 (absolute
// error below 1.5e-7, float32's own resolution near 1); for x < 0 the
// polynomial gives 1+erf directly, so there is no cancellation in the tail.
func geluErf(x float32) float32 {
	z := x * (1 / math.Sqrt2)
	az := z
	if az < 0 {
		az = -az
	}
	t := 1 / (1 + 0.3275911*az)
	p := ((((1.061405429*t-1.453152027)*t+1.421413741)*t-0.284496736)*t + 0.254829592) * t
	c := p * exp32(-az*az) // 1 - erf(|z|)
	if z < 0 {
		return 0.5 * x * c
	}
	return 0.5 * x * (2 - c)
}

// geluTanh is GELU's tanh approximation (nn.GELU(approximate="tanh")),
// with 1+tanh(y) = 2 - 2/(e^{2y}+1).
func geluTanh(x float32) float32 {
	const c = 0.7978845608028654 // sqrt(2/pi)
	y := c * (x + 0.044715*x*x*x)
	return 0.5 * x * (2 - 2/(exp32(2*y)+1))
}

// runEW checks the operands of an element-wise dispatch and runs it. The
// operand slots are given by the caller; bSlot < 0 means no second input.
func (e *Exec) runEW(d *plan.Dispatch, op ewOp, n, m, aSlot, lda, bSlot, ldb, oSlot, ldo int, s float32) error {
	if n == 0 || m == 0 {
		return nil
	}
	if m > 1 && (lda < n || ldo < n || (bSlot >= 0 && ldb < n && !(op == ewAdd && ldb == 0))) {
		return e.errf("row strides (%d, %d, %d) smaller than row length %d", lda, ldb, ldo, n)
	}
	k := &e.ewT
	*k = ewTask{op: op, n: n, lda: lda, ldb: ldb, ldo: ldo, s: s}
	var err error
	if k.a, err = e.f32(d, aSlot, extent(m, lda, n)); err != nil {
		return err
	}
	if bSlot >= 0 {
		bm := m
		if ldb == 0 {
			bm = 1
		}
		if k.b, err = e.f32(d, bSlot, extent(bm, ldb, n)); err != nil {
			return err
		}
	}
	if op == ewCopyF16 || op == ewCopyBF16 {
		k.h, err = typedSlice[uint16](e, d, oSlot, extent(m, ldo, n))
	} else {
		k.out, err = e.f32(d, oSlot, extent(m, ldo, n))
	}
	if err != nil {
		return err
	}
	e.pool.Run(m, chunkGrain(n), k)
	k.a, k.b, k.out, k.h = nil, nil, nil, nil
	return nil
}

// binary runs the two-input row-wise kernels (the Binary layout: SiLUMul,
// GELUMul, Add) with op.
func (e *Exec) binary(d *plan.Dispatch, op ewOp) error {
	p := plan.DecodeBinary(d)
	return e.runEW(d, op, p.N, p.M, plan.SlotBinaryA, p.Lda, plan.SlotBinaryB, p.Ldb, plan.SlotBinaryOut, p.Ldo, 0)
}

func (e *Exec) gelu(d *plan.Dispatch) error {
	p := plan.DecodeGELU(d)
	if err := p.Check(); err != nil {
		return e.errf("%v", err)
	}
	op := ewGELUErf
	if p.Mode == plan.ActGELUTanh {
		op = ewGELUTanh
	}
	return e.runEW(d, op, p.N, p.M, plan.SlotGELUX, p.Ldx, -1, 0, plan.SlotGELUOut, p.Ldo, 0)
}

func (e *Exec) scale(d *plan.Dispatch) error {
	p := plan.DecodeScale(d)
	return e.runEW(d, ewScale, p.N, p.M, plan.SlotScaleX, p.Ldx, -1, 0, plan.SlotScaleOut, p.Ldo, p.Scale)
}

func (e *Exec) copyOp(d *plan.Dispatch) error {
	p := plan.DecodeCopy(d)
	op := ewCopyF32
	switch d.Type {
	case ggml.F16:
		op = ewCopyF16
	case ggml.BF16:
		op = ewCopyBF16
	}
	return e.runEW(d, op, p.N, p.M, plan.SlotCopySrc, p.Lds, -1, 0, plan.SlotCopyDst, p.Ldd, 0)
}

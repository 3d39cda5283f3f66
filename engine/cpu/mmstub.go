package cpu

// TEMPORARY: a plain float product with the signature of MM's MatMul so the
// executor builds before wt-mm is merged. Deleted at that merge.

import (
	"fmt"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
)

type MatMul struct {
	pool *Pool
	t    stubTask
}

func NewMatMul(pool *Pool) *MatMul { return &MatMul{pool: pool} }

type stubTask struct {
	t                 ggml.Type
	w                 []byte
	k, m              int
	x, out, bias, res []float32
	ldx, ldo, ldr     int
}

func (s *stubTask) Do(_, lo, hi int) {
	rb := s.k * 4
	if s.t != ggml.F32 {
		rb = s.k * 2
	}
	for j := lo; j < hi; j++ {
		row := s.w[j*rb : (j+1)*rb]
		for i := 0; i < s.m; i++ {
			x := s.x[i*s.ldx : i*s.ldx+s.k]
			var acc float32
			for kk := range x {
				var wv float32
				switch s.t {
				case ggml.F32:
					wv = *(*float32)(unsafe.Pointer(&row[kk*4]))
				case ggml.F16:
					wv = ggml.FP16ToFP32(uint16(row[kk*2]) | uint16(row[kk*2+1])<<8)
				default:
					wv = ggml.BF16ToFP32(uint16(row[kk*2]) | uint16(row[kk*2+1])<<8)
				}
				acc += x[kk] * wv
			}
			if s.bias != nil {
				acc += s.bias[j]
			}
			if s.res != nil {
				acc += s.res[i*s.ldr+j]
			}
			s.out[i*s.ldo+j] = acc
		}
	}
}

func (mm *MatMul) Mul(t ggml.Type, w []byte, n, k, m int, x []float32, ldx int, out []float32, ldo int, bias, res []float32, ldr int) error {
	if t != ggml.F32 && t != ggml.F16 && t != ggml.BF16 {
		return fmt.Errorf("stub matmul: type %s", t)
	}
	mm.t = stubTask{t: t, w: w, k: k, m: m, x: x, out: out, bias: bias, res: res, ldx: ldx, ldo: ldo, ldr: ldr}
	mm.pool.Run(n, 8, &mm.t)
	return nil
}

package metal

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// access is what one binding of a resolved dispatch does to its buffer:
// the byte range [lo, hi) it may touch (used for hazards) and the bytes it
// actually reads or writes (touched, used for the bytes-per-token figures;
// smaller than the range when rows are strided).
type access struct {
	buf     plan.BufID
	lo, hi  uint64
	touched uint64
	write   bool
	read    bool
}

// accesses appends the accesses of every present binding of d (resolved),
// following the kernel contract in engine/plan/kernels.go. sizes holds
// every plan buffer's size; a binding whose extent cannot be computed is taken to run
// to the end of its buffer, which is conservative for hazards.
func accesses(d *plan.Dispatch, sizes []uint64, dst []access) []access {
	size := func(id plan.BufID) uint64 {
		if int(id) < len(sizes) {
			return sizes[id]
		}
		return 0
	}
	p := func(i int) uint64 { return uint64(d.P[i]) }
	f32 := func(m, ld, n uint64) (uint64, uint64) { return satMul(rows(m, ld, n), 4), satMul(satMul(m, n), 4) }
	add := func(slot int, read, write bool, ext, touched uint64) {
		if slot >= int(d.NBind) || d.Bind[slot].Buf == plan.NoBuf {
			return
		}
		b := d.Bind[slot]
		lo := b.Off
		hi := satAdd(lo, ext)
		if ext == all {
			hi = max(size(b.Buf), lo)
		}
		dst = append(dst, access{buf: b.Buf, lo: lo, hi: hi, touched: min(touched, hi-lo), read: read, write: write})
	}
	addF := func(slot int, read, write bool, m, ld, n uint64) {
		e, t := f32(m, ld, n)
		add(slot, read, write, e, t)
	}
	weights := func(slot int, n, k uint64) {
		rb, err := ggml.RowBytes(d.Type, int64(k))
		if err != nil {
			add(slot, true, false, all, all)
			return
		}
		add(slot, true, false, satMul(n, uint64(rb)), satMul(n, uint64(rb)))
	}
	kvElem := uint64(4)
	if d.Type == ggml.F16 || d.Type == ggml.BF16 {
		kvElem = 2
	}
	switch d.Kernel {
	case plan.Embed:
		dim, n, ldo := p(0), p(1), p(2)
		rb, err := ggml.RowBytes(d.Type, int64(dim))
		if err != nil {
			rb = 0
		}
		add(0, true, false, all, n*uint64(rb)) // rows picked by ids
		add(1, true, false, n*4, n*4)
		acc := d.P[3]&plan.FlagAccumulate != 0
		addF(2, acc, true, n, ldo, dim)
	case plan.RMSNorm:
		dim, r, inner := p(0), p(1), max(p(5), 1)
		ext := func(ld uint64) uint64 {
			if r == 0 {
				return 0
			}
			last := r - 1
			e := (last/inner)*ld + (last%inner)*dim + dim
			if last >= inner {
				e = max(e, (last/inner-1)*ld+inner*dim)
			}
			return e * 4
		}
		add(0, true, false, ext(p(2)), r*dim*4)
		add(1, true, false, dim*4, dim*4)
		add(2, false, true, ext(p(3)), r*dim*4)
	case plan.LayerNorm:
		dim, r := p(0), p(1)
		addF(0, true, false, r, p(2), dim)
		add(1, true, false, dim*4, dim*4)
		add(2, true, false, dim*4, dim*4)
		addF(3, false, true, r, p(3), dim)
	case plan.MatVec, plan.MatMul, plan.RMSNormMatVec:
		n, k, m := p(0), p(1), p(2)
		weights(0, n, k)
		addF(1, true, false, m, p(3), k)
		addF(2, false, true, m, p(4), n)
		add(3, true, false, n*4, n*4)
		addF(4, true, false, m, p(5), n)
		if d.Kernel == plan.RMSNormMatVec {
			add(5, true, false, k*4, k*4)
		}
	case plan.SiLUMul:
		n, m := p(0), p(1)
		addF(0, true, false, m, p(2), n)
		addF(1, true, false, m, p(3), n)
		addF(2, false, true, m, p(4), n)
	case plan.SiLUMulMatVec:
		n, k, m := p(0), p(1), p(2)
		weights(0, n, k)
		addF(1, true, false, m, p(3), k)
		addF(2, false, true, m, p(4), n)
		add(3, true, false, n*4, n*4)
		addF(4, true, false, m, p(5), n)
		addF(5, true, false, m, p(6), k)
	case plan.GELU, plan.Scale, plan.Softmax:
		n, m := p(0), p(1)
		addF(0, true, false, m, p(2), n)
		addF(1, false, true, m, p(3), n)
	case plan.Add:
		n, m := p(0), p(1)
		addF(0, true, false, m, p(2), n)
		if p(3) == 0 {
			addF(1, true, false, 1, 0, n)
		} else {
			addF(1, true, false, m, p(3), n)
		}
		addF(2, false, true, m, p(4), n)
	case plan.Rope:
		hd, nh, m := p(0), p(1), p(2)
		addF(0, true, true, m, p(3), nh*hd)
		add(1, true, false, p(6)/2*4, p(6)/2*4)
	case plan.RopeKV:
		hd, nh, nkv, m := p(0), p(1), p(2), p(3)
		addF(0, true, true, m, p(4), (nh+2*nkv)*hd)
		add(1, true, false, p(7)/2*4, p(7)/2*4)
		seqs, pos := uint64(1), p(5)+max(m, 1)-1
		if d.P[11]&plan.FlagPerSeqRows != 0 {
			seqs, pos = max(m, 1), p(5)
		}
		lo := p(5) * p(9) * kvElem
		hi := max(satMul(satAdd(satAdd(satMul(seqs-1, p(10)), satMul(max(nkv, 1)-1, p(8))), satAdd(satMul(pos, p(9)), hd)), kvElem), lo)
		for _, slot := range [2]int{2, 3} {
			if slot < int(d.NBind) && d.Bind[slot].Buf != plan.NoBuf {
				b := d.Bind[slot]
				dst = append(dst, access{buf: b.Buf, lo: satAdd(b.Off, lo), hi: satAdd(b.Off, hi), touched: m * nkv * hd * kvElem, write: true})
			}
		}
	case plan.Attention:
		hd, nh, nkv, m, kvLen := p(0), p(1), p(2), p(3), p(6)
		addF(0, true, false, m, p(4), nh*hd)
		seqs := uint64(1)
		if d.P[8]&plan.FlagPerSeqRows != 0 {
			seqs = max(m, 1)
		}
		ext := uint64(0)
		if kvLen > 0 && nkv > 0 {
			ext = satMul(satAdd(satAdd(satMul(seqs-1, p(12)), satMul(nkv-1, p(10))), satAdd(satMul(kvLen-1, p(11)), hd)), kvElem)
		}
		add(1, true, false, ext, seqs*nkv*kvLen*hd*kvElem)
		add(2, true, false, ext, seqs*nkv*kvLen*hd*kvElem)
		addF(3, false, true, m, p(5), nh*hd)
		addF(4, false, true, nh*m, p(13), kvLen)
	case plan.Conv1D:
		cin, cout, T, kw, stride, pad := p(0), p(1), p(2), p(3), max(p(4), 1), p(5)
		weights(0, cout, kw*cin)
		if d.P[6]&plan.FlagChannelMaj != 0 {
			addF(1, true, false, cin, p(7), T)
		} else {
			addF(1, true, false, T, p(7), cin)
		}
		add(2, true, false, cout*4, cout*4)
		tout := uint64(0)
		if T+2*pad >= kw {
			tout = (T+2*pad-kw)/stride + 1
		}
		addF(3, false, true, tout, p(8), cout)
	case plan.Argmax:
		n, m := p(0), p(1)
		addF(0, true, false, m, p(2), n)
		add(1, false, true, m*4, m*4)
	case plan.Sample:
		n := p(0)
		add(0, true, false, n*4, n*4)
		add(1, false, true, 4, 4)
		add(2, true, false, p(8)*4, p(8)*4)
		add(3, true, true, 2*n*4, 2*n*4)
	case plan.Copy:
		n, m := p(0), p(1)
		addF(0, true, false, m, p(2), n)
		add(1, false, true, rows(m, p(3), n)*kvElem, m*n*kvElem)
	default:
		for slot := range int(d.NBind) {
			add(slot, true, true, all, all)
		}
	}
	return dst
}

// all marks an extent that runs to the end of the buffer; arithmetic
// saturates one below it (sat), so an absurd extent never reads as "to the
// end" and fails the bounds check instead.
const (
	all = ^uint64(0)
	sat = all - 1
)

// rows is the element extent of m rows of n with stride ld.
func rows(m, ld, n uint64) uint64 {
	if m == 0 || n == 0 {
		return 0
	}
	return satAdd(satMul(m-1, ld), n)
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b >= sat/a {
		return sat
	}
	return a * b
}

func satAdd(a, b uint64) uint64 {
	if a >= sat-b || b >= sat {
		return sat
	}
	return a + b
}

// Access is the extent of one binding of a resolved dispatch, exported for
// the CUDA backend, which bounds-checks its launches against the same
// contract (see Range).
type Access = access

// Accesses appends the accesses of every present binding of d (resolved);
// see accesses.
func Accesses(d *plan.Dispatch, sizes []uint64, dst []Access) []Access {
	return accesses(d, sizes, dst)
}

// Range is the buffer and byte range [lo, hi) the binding may touch.
func (a access) Range() (buf plan.BufID, lo, hi uint64) { return a.buf, a.lo, a.hi }

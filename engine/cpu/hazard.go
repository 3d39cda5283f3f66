package cpu

import "github.com/harkapp/hark/engine/plan"

// fences marks the dispatches of a pass that must wait for every job still
// in flight before they start: those that read what an unfenced dispatch
// since the last fence writes, or write what one reads or writes. The
// others (a layer's q, k and v products from the same input, its gate and
// up products) start while the helpers still finish the ones before, so a
// decode step pays a barrier only between dependent dispatches, as ggml's
// graph compute does. Computed once at load from the bindings' byte
// ranges; a dispatch with patches may move anywhere in its buffers, so
// each of its bindings counts as the whole buffer.
func fences(ops []plan.Dispatch) []bool {
	fence := make([]bool, len(ops))
	var open, acc []span
	for i := range ops {
		acc = spans(&ops[i], acc[:0])
		if i == 0 || conflicts(acc, open) {
			fence[i] = true
			open = open[:0]
		}
		open = append(open, acc...)
	}
	return fence
}

// span is one binding's absolute byte range in its buffer.
type span struct {
	buf    plan.BufID
	lo, hi uint64
	write  bool
}

func spans(d *plan.Dispatch, dst []span) []span {
	var acc [plan.MaxBind]plan.Access
	for _, a := range d.Accesses(acc[:0]) {
		b := d.Bind[a.Slot]
		s := span{buf: b.Buf, lo: plan.SatAdd(b.Off, a.Lo), hi: plan.ToEnd, write: a.Write}
		if a.Hi != plan.ToEnd {
			s.hi = plan.SatAdd(b.Off, a.Hi)
		}
		if d.NPatch > 0 {
			s.lo, s.hi = 0, plan.ToEnd
		}
		if a.Read || a.Write {
			dst = append(dst, s)
		}
	}
	return dst
}

// conflicts reports whether a dispatch with accesses acc must wait for
// the dispatches with accesses open.
func conflicts(acc, open []span) bool {
	for _, a := range acc {
		for _, o := range open {
			if a.buf == o.buf && (a.write || o.write) && a.lo < o.hi && o.lo < a.hi {
				return true
			}
		}
	}
	return false
}

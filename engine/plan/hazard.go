package plan

// Span is what one binding of a dispatch does to its buffer, placed in
// it: the absolute byte range [Lo, Hi) it may touch (for hazards and
// bounds), the bytes it actually reads or writes (Touched; smaller than
// the range when rows are strided), and how.
type Span struct {
	Buf         BufID
	Lo, Hi      uint64
	Touched     uint64
	Read, Write bool
}

// Spans appends the spans of every present binding of d, as the kernel
// contract declares them (Accesses). A range that runs to the end of its
// buffer ends at sizes[buf] when sizes is given (conservative for hazards,
// exact for bounds) and stays ToEnd when it is not. Patched fields are
// taken as they stand: resolve d first, or widen its spans.
func (d *Dispatch) Spans(sizes []uint64, dst []Span) []Span {
	var tmp [MaxBind]Access
	for _, a := range d.Accesses(tmp[:0]) {
		b := d.Bind[a.Slot]
		lo, hi := SatAdd(b.Off, a.Lo), SatAdd(b.Off, a.Hi)
		if a.Hi == ToEnd {
			hi = ToEnd
			if sizes != nil {
				size := uint64(0)
				if int(b.Buf) < len(sizes) {
					size = sizes[b.Buf]
				}
				hi = max(size, lo)
			}
		}
		dst = append(dst, Span{Buf: b.Buf, Lo: lo, Hi: hi, Touched: min(a.Touched, hi-lo), Read: a.Read, Write: a.Write})
	}
	return dst
}

// Hazards decides which dispatches must wait for the ones before them:
// one that reads what an earlier dispatch writes, or writes what one reads
// or writes, since the last wait (a barrier of a concurrent GPU encoder,
// a fence of the CPU pool). Independent dispatches (a layer's Q, K and V
// products, writing disjoint columns of one buffer) run side by side. It
// keeps the spans since the last wait.
type Hazards struct {
	pending []Span
}

// Reset forgets the pending spans (after a wait the caller placed itself).
func (h *Hazards) Reset() { h.pending = h.pending[:0] }

// Add records the spans of the next dispatch and reports whether it must
// wait first (the pending set then restarts with it).
func (h *Hazards) Add(acc []Span) bool {
	conflict := conflicts(acc, h.pending)
	if conflict {
		h.pending = h.pending[:0]
	}
	h.pending = append(h.pending, acc...)
	return conflict
}

func conflicts(acc, pending []Span) bool {
	for _, a := range acc {
		for _, p := range pending {
			if a.Buf == p.Buf && (a.Write || p.Write) && a.Lo < p.Hi && p.Lo < a.Hi {
				return true
			}
		}
	}
	return false
}

package metal

import "github.com/harkapp/hark/engine/plan"

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
// as the kernel contract declares them (plan.Dispatch.Accesses), placed in
// their buffers. sizes holds every plan buffer's size; a span that runs to
// the end of its buffer (plan.ToEnd) ends there, which is conservative for
// hazards.
func accesses(d *plan.Dispatch, sizes []uint64, dst []access) []access {
	var tmp [plan.MaxBind]plan.Access
	for _, a := range d.Accesses(tmp[:0]) {
		b := d.Bind[a.Slot]
		lo := plan.SatAdd(b.Off, a.Lo)
		hi := plan.SatAdd(b.Off, a.Hi)
		if a.Hi == plan.ToEnd {
			size := uint64(0)
			if int(b.Buf) < len(sizes) {
				size = sizes[b.Buf]
			}
			hi = max(size, lo)
		}
		dst = append(dst, access{buf: b.Buf, lo: lo, hi: hi, touched: min(a.Touched, hi-lo), read: a.Read, write: a.Write})
	}
	return dst
}

package cpu

import (
	"os"
	"unsafe"
)

// spare is scratch memory that some passes need and others do not (the
// arena's prefill rows, attention's packed keys, the quantized GEMM's
// activations): an anonymous mapping of its own, whose pages the
// executor gives back to the OS after a pass that alone needed them
// (arena_release.go), so they are not resident while the model decodes
// or sits idle. The next such pass faults them in again, zeroed. Where
// mapping fails (or off Linux: dropPages) the heap serves and the pages
// stay.
type spare struct {
	b      []byte
	mapped bool // b is a mapping of its own: drop may give its pages back
}

// newSpare returns at least n zeroed bytes: whole pages where mapped, so
// that its last page can be given back too.
func newSpare(n int64) spare {
	if b := mapAnon(alignUp(n, int64(os.Getpagesize()))); b != nil {
		return spare{b: b, mapped: true}
	}
	return spare{b: alignedBytes(n)}
}

// grow makes s hold at least n bytes; what it held is not kept.
func (s *spare) grow(n int) {
	if n > len(s.b) {
		s.free()
		*s = newSpare(int64(n))
	}
}

// floats is s's first n bytes' worth of float32s (n ≤ len(s.b)/4).
func (s *spare) floats(n int) []float32 {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s.b))), n)
}

// drop gives back the pages wholly inside bytes [lo, hi) of s, and
// returns their bytes. Nothing may use them meanwhile (the executor
// drops between passes, under its lock, after the pass's last fence).
func (s *spare) drop(lo, hi int64) int64 {
	hi = min(hi, int64(len(s.b)))
	if !s.mapped || lo >= hi {
		return 0
	}
	return dropPages(s.b[lo:hi])
}

// free unmaps s (heap memory is left to the collector).
func (s *spare) free() {
	if s.mapped {
		packFree(s.b)
	}
	*s = spare{}
}

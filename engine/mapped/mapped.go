// Package mapped records which memory is a file mapping. engine's mapfile
// registers every map it makes, so a backend can tell a tensor that lies in
// a mapped model file (whole pages around it are mapped too: Metal wraps
// them without a copy) from one in Go memory, whose neighbouring pages may
// be another object's or none at all (a pointer rounded down to a page
// there is one the garbage collector rejects).
package mapped

import (
	"sync"
	"unsafe"
)

var (
	mu   sync.Mutex
	maps = map[uintptr]uintptr{} // start -> end of each registered map
)

// Register records b as a mapping until Unregister(b).
func Register(b []byte) {
	if len(b) == 0 {
		return
	}
	lo := addr(b)
	mu.Lock()
	maps[lo] = lo + uintptr(len(b))
	mu.Unlock()
}

// Unregister forgets the mapping b.
func Unregister(b []byte) {
	if len(b) == 0 {
		return
	}
	mu.Lock()
	delete(maps, addr(b))
	mu.Unlock()
}

// Bounds returns the registered mapping that holds every byte of b, as its
// first and one-past-last address.
func Bounds(b []byte) (lo, hi uintptr, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	p := addr(b)
	end := p + uintptr(len(b))
	mu.Lock()
	defer mu.Unlock()
	for s, e := range maps {
		if s <= p && end <= e {
			return s, e, true
		}
	}
	return 0, 0, false
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

//go:build linux || darwin

package cpu

import "golang.org/x/sys/unix"

// packAlloc returns n zeroed bytes for a pack outside the Go heap (an
// anonymous mapping, page-aligned): a model's packs are most of its
// resident memory and live as long as it, and on the heap they would
// double the collector's target (GOGC), letting garbage grow by their
// size. Freed by packFree; the heap serves where mapping fails.
func packAlloc(n int64) []byte {
	if b := mapAnon(n); b != nil {
		return b
	}
	return alignedBytes(n)
}

// mapAnon returns n zeroed bytes in an anonymous private mapping of their
// own, or nil where n is 0 or mapping fails.
func mapAnon(n int64) []byte {
	if n > 0 {
		if b, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON); err == nil {
			return b
		}
	}
	return nil
}

// packFree releases a packAlloc'd buffer (a heap one is left to the
// collector).
func packFree(b []byte) {
	if len(b) > 0 {
		_ = unix.Munmap(b) // EINVAL for a heap buffer: nothing to do
	}
}

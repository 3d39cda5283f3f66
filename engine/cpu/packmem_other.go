//go:build !linux && !darwin

package cpu

// packAlloc returns n zeroed bytes for a pack (on the heap here).
func packAlloc(n int64) []byte { return alignedBytes(n) }

// mapAnon maps nothing here: the heap serves.
func mapAnon(int64) []byte { return nil }

// packFree leaves a pack to the collector.
func packFree([]byte) {}

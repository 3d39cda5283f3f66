package cpu

import "unsafe"

// f16Ptr is the address of a byte slice holding halves.
func f16Ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

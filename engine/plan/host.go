package plan

import (
	"encoding/binary"
	"unsafe"
)

// Typed host access to an executable's buffers. Plan buffers hold
// little-endian values, and Hark runs on little-endian hosts (amd64,
// arm64), so a slice's memory is passed as it is: no staging copy, no
// allocation. Offsets count elements.

func init() {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		panic("plan: typed host access assumes a little-endian host")
	}
}

func asBytes[T float32 | int32 | uint32](v []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// WriteF32 writes v into buf from float32 element off.
func WriteF32(x Executable, buf BufID, off int, v []float32) error {
	return x.Write(buf, 4*int64(off), asBytes(v))
}

// ReadF32 fills dst from buf, starting at float32 element off.
func ReadF32(x Executable, buf BufID, off int, dst []float32) error {
	return x.Read(buf, 4*int64(off), asBytes(dst))
}

// WriteI32 writes v into buf from int32 element off.
func WriteI32(x Executable, buf BufID, off int, v []int32) error {
	return x.Write(buf, 4*int64(off), asBytes(v))
}

// WriteU32 writes v into buf from uint32 element off.
func WriteU32(x Executable, buf BufID, off int, v []uint32) error {
	return x.Write(buf, 4*int64(off), asBytes(v))
}

// ReadI32 fills dst from buf, starting at int32 element off.
func ReadI32(x Executable, buf BufID, off int, dst []int32) error {
	return x.Read(buf, 4*int64(off), asBytes(dst))
}

// Package binread reads little-endian fields from an in-memory model file
// with every read checked against the bytes left, so a truncated or hostile
// file gives an error naming the field instead of a panic.
package binread

import (
	"encoding/binary"
	"fmt"
)

// Reader is a cursor over b.
type Reader struct {
	B   []byte
	Pos int
}

// Remaining is the number of unread bytes.
func (d *Reader) Remaining() int { return len(d.B) - d.Pos }

// Take returns the next n bytes (aliasing B).
func (d *Reader) Take(n int, what string) ([]byte, error) {
	if n < 0 || n > d.Remaining() {
		return nil, fmt.Errorf("truncated file: %s needs %d bytes at offset %d, %d left", what, n, d.Pos, d.Remaining())
	}
	s := d.B[d.Pos : d.Pos+n]
	d.Pos += n
	return s, nil
}

// U32 reads a uint32.
func (d *Reader) U32(what string) (uint32, error) {
	s, err := d.Take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

// I32 reads an int32.
func (d *Reader) I32(what string) (int32, error) {
	v, err := d.U32(what)
	return int32(v), err
}

// U64 reads a uint64.
func (d *Reader) U64(what string) (uint64, error) {
	s, err := d.Take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

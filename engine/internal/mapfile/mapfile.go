// Package mapfile gives read-only access to a whole file as a byte slice:
// memory-mapped where the OS supports it (so multi-gigabyte weights cost no
// heap and load lazily), read into memory elsewhere.
package mapfile

import (
	"fmt"
	"os"
)

// File is a read-only view of a file's bytes. Data is valid until Close.
type File struct {
	Data   []byte
	mapped bool
}

// Open maps (or reads) the whole file at path.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: file too large for this platform (%d bytes)", path, size)
	}
	if size == 0 {
		// Mapping an empty file fails on most systems; an empty slice is
		// the same view.
		return &File{Data: []byte{}}, nil
	}
	return mapOpen(f, int(size))
}

// Mapped reports whether Data is a memory map (as opposed to a heap copy).
func (m *File) Mapped() bool { return m.mapped }

// Close releases the mapping. Slices of Data must not be used afterwards.
func (m *File) Close() error {
	if m == nil || m.Data == nil {
		return nil
	}
	d := m.Data
	m.Data = nil
	if m.mapped {
		return unmap(d)
	}
	return nil
}

// OpenParsed maps path and parses its bytes with parse (whose result may
// alias them): the model readers' Open. When parse fails the map is
// released and the error names path.
func OpenParsed[T any](path string, parse func([]byte) (T, error)) (T, *File, error) {
	var zero T
	m, err := Open(path)
	if err != nil {
		return zero, nil, err
	}
	v, err := parse(m.Data)
	if err != nil {
		m.Close()
		return zero, nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, m, nil
}

// Release is the model readers' Close: drop forgets every slice into the
// map, then *m is closed and set to nil. A nil *m (never mapped, or
// already released) does nothing.
func Release(m **File, drop func()) error {
	if *m == nil {
		return nil
	}
	drop()
	err := (*m).Close()
	*m = nil
	return err
}

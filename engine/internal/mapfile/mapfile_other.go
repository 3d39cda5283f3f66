//go:build !(linux || darwin)

package mapfile

import (
	"io"
	"os"
)

// mapOpen reads the file into memory on systems without a mapping here.
func mapOpen(f *os.File, size int) (*File, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return &File{Data: b}, nil
}

func unmap([]byte) error { return nil }

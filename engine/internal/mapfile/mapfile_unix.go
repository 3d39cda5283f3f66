//go:build linux || darwin

package mapfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func mapOpen(f *os.File, size int) (*File, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return &File{Data: b, mapped: true}, nil
}

func unmap(b []byte) error { return unix.Munmap(b) }

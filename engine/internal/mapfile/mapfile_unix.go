//go:build linux || darwin

package mapfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/harkapp/hark/engine/mapped"
)

func mapOpen(f *os.File, size int) (*File, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	mapped.Register(b)
	return &File{Data: b, mapped: true}, nil
}

func unmap(b []byte) error {
	mapped.Unregister(b)
	return unix.Munmap(b)
}

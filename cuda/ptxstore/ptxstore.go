// Package ptxstore is how the generated PTX modules are stored in the
// repository: xz (LZMA2, preset 9e), because the tracked tree travels to the
// GPU machine with every call and PTX repeats itself at distances far beyond
// gzip's 32-KB window (the base module: 15 MB as text, 2.9 MB as gzip,
// 0.9 MB as xz). cuda/gen writes them with xz(1), whose encoder compresses
// these modules 2.4x better than the pure-Go one, and compares their
// content; the cuda package embeds them and decodes them once, only where no
// cubin covers the GPU.
package ptxstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/ulikunitz/xz"
)

// Ext is the stored modules' file extension.
const Ext = ".ptx.xz"

// maxPTX bounds a decoded module (the base module is about 15 MB).
const maxPTX = 256 << 20

// xzArgs are xz(1)'s settings: single-threaded so the bytes depend only on
// the input and xz's version, and a 32-MiB dictionary (the whole module; the
// decoder allocates what the header names, so not preset 9e's 64 MiB).
var xzArgs = []string{"--format=xz", "--check=crc64", "--lzma2=preset=9e,dict=32MiB", "-T1", "-c"}

// Encode compresses a module with xz(1).
func Encode(ptx []byte) ([]byte, error) {
	cmd := exec.Command("xz", xzArgs...)
	cmd.Stdin = bytes.NewReader(ptx)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ptxstore: xz: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out.Bytes(), nil
}

// Decode returns a stored module's PTX.
func Decode(stored []byte) ([]byte, error) { return decode(stored, maxPTX) }

func decode(stored []byte, limit int) ([]byte, error) {
	r, err := xz.NewReader(bytes.NewReader(stored))
	if err != nil {
		return nil, fmt.Errorf("ptxstore: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("ptxstore: %w", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("ptxstore: a module over %d bytes", limit)
	}
	if len(b) == 0 {
		return nil, errors.New("ptxstore: an empty module")
	}
	return b, nil
}

// Write stores ptx at path.
func Write(path string, ptx []byte) error {
	stored, err := Encode(ptx)
	if err != nil {
		return err
	}
	return os.WriteFile(path, stored, 0o644)
}

// Read returns the PTX stored at path.
func Read(path string) ([]byte, error) {
	stored, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(stored)
}

// Package ptxgz is how the generated PTX modules are stored in the
// repository: gzip at the best compression, with an empty header, so the
// tracked tree (which travels to the GPU machine with every call) stays
// small: the base module is 10 MB as text and 1.8 MB compressed. cuda/gen
// writes them and compares their content; the cuda package embeds and
// inflates them once.
package ptxgz

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// Ext is the stored modules' file extension.
const Ext = ".ptx.gz"

// maxPTX bounds an inflated module (the base module is about 10 MB).
const maxPTX = 256 << 20

// Encode compresses a module. The header carries no name or time, so the
// same PTX and Go version give the same bytes.
func Encode(ptx []byte) ([]byte, error) {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(ptx); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Decode inflates a stored module.
func Decode(gz []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("ptxgz: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPTX+1))
	if err != nil {
		return nil, fmt.Errorf("ptxgz: %w", err)
	}
	if len(b) > maxPTX {
		return nil, fmt.Errorf("ptxgz: a module over %d bytes", maxPTX)
	}
	return b, r.Close()
}

// Write stores ptx at path.
func Write(path string, ptx []byte) error {
	gz, err := Encode(ptx)
	if err != nil {
		return err
	}
	return os.WriteFile(path, gz, 0o644)
}

// Read returns the PTX stored at path.
func Read(path string) ([]byte, error) {
	gz, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(gz)
}

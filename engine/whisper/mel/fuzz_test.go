package mel

import (
	"bytes"
	"testing"
)

// FuzzNPY checks the .npy parser on arbitrary headers and data.
func FuzzNPY(f *testing.F) {
	f.Add([]byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }          \n\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := readNPY(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.shape {
			n *= d
		}
		if n != len(a.data) {
			t.Fatalf("shape %v but %d values", a.shape, len(a.data))
		}
	})
}

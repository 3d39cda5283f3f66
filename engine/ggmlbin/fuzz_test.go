package ggmlbin

import (
	"bytes"
	"testing"
)

// FuzzGGMLBin parses arbitrary bytes: no panics, and anything that parses
// is written back byte for byte (the format has no slack to normalise).
// Seeds live in testdata/fuzz/FuzzGGMLBin.
func FuzzGGMLBin(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		_ = g.CheckSupported()
		for i := range g.Tensors {
			tt := &g.Tensors[i]
			if int64(len(tt.Data)) != tt.Bytes || tt.Offset+tt.Bytes > int64(len(b)) {
				t.Fatalf("tensor %q: bad range", tt.Name)
			}
		}
		var buf bytes.Buffer
		if _, err := g.WriteTo(&buf); err != nil {
			t.Fatalf("writing a parsed file: %v", err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatal("round trip changed the file")
		}
	})
}

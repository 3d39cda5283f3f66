package gguf

import (
	"bytes"
	"testing"
)

// FuzzGGUF parses arbitrary bytes: it must never panic, and whatever
// parses must survive a write/parse round trip unchanged. Seeds live in
// testdata/fuzz/FuzzGGUF (a small valid file, truncations, corruptions).
func FuzzGGUF(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Parse(b)
		if err != nil {
			return
		}
		for i := range g.Tensors {
			tt := &g.Tensors[i]
			if int64(len(tt.Data)) != tt.Bytes || tt.Offset < g.DataOffset || tt.Offset+tt.Bytes > int64(len(b)) {
				t.Fatalf("tensor %q: bad range offset %d bytes %d len %d", tt.Name, tt.Offset, tt.Bytes, len(tt.Data))
			}
		}
		_ = g.CheckSupported()
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, kv := range g.KVs {
			if err := w.AddKV(kv.Key, kv.Value); err != nil {
				t.Fatalf("writer refused parsed key %q: %v", kv.Key, err)
			}
		}
		for _, tt := range g.Tensors {
			if err := w.AddTensor(tt.Name, tt.Type, tt.Shape); err != nil {
				t.Fatalf("writer refused parsed tensor %q: %v", tt.Name, err)
			}
		}
		for _, tt := range g.Tensors {
			if err := w.WriteTensor(tt.Data); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		h, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if len(h.KVs) != len(g.KVs) || len(h.Tensors) != len(g.Tensors) {
			t.Fatal("round trip changed the counts")
		}
		for i := range g.KVs {
			if g.KVs[i].Key != h.KVs[i].Key || !g.KVs[i].Value.Equal(h.KVs[i].Value) {
				t.Fatalf("round trip changed key %q", g.KVs[i].Key)
			}
		}
		for i := range g.Tensors {
			p, q := &g.Tensors[i], &h.Tensors[i]
			if p.Name != q.Name || p.Type != q.Type || p.Bytes != q.Bytes || !bytes.Equal(p.Data, q.Data) {
				t.Fatalf("round trip changed tensor %q", p.Name)
			}
		}
	})
}

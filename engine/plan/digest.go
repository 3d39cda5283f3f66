package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// Digest is the SHA-256 of the plan's canonical encoding: its name (and
// FloatActivations when set), the
// buffer table (name, kind, size and the length of a weights buffer's
// bytes, not their content) and every pass with every dispatch record
// field by field (kernel id, type, binding and patch counts, all binding
// slots, all params words, the grid and all patch slots), little-endian.
// Two plans with the same digest make the same launches with the same
// argument bytes on every backend; refactors of the builders and of the
// kernel contract are checked against recorded digests.
func (p *Plan) Digest() [32]byte {
	e := digester{h: sha256.New()}
	e.str(p.Name)
	if p.FloatActivations { // written only when set: other plans keep their digests
		e.str("float activations")
	}
	e.u64(uint64(len(p.Buffers)))
	for _, b := range p.Buffers {
		e.str(b.Name)
		e.u64(uint64(b.Kind))
		e.u64(uint64(b.Size))
		e.u64(uint64(b.WeightsLen()))
	}
	e.u64(uint64(len(p.Passes)))
	for _, ps := range p.Passes {
		e.str(ps.Name)
		e.u64(uint64(len(ps.Ops)))
		for i := range ps.Ops {
			e.dispatch(&ps.Ops[i])
		}
	}
	var sum [32]byte
	e.h.Sum(sum[:0])
	return sum
}

// digester writes fixed-width little-endian fields; strings are
// length-prefixed so adjacent fields cannot run into each other.
type digester struct {
	h   hash.Hash
	buf [8]byte
}

func (e *digester) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.h.Write(e.buf[:])
}

func (e *digester) str(s string) {
	e.u64(uint64(len(s)))
	e.h.Write([]byte(s))
}

func (e *digester) dispatch(d *Dispatch) {
	e.u64(uint64(d.Kernel))
	e.u64(uint64(d.Type))
	e.u64(uint64(d.NBind))
	e.u64(uint64(d.NPatch))
	for _, b := range d.Bind {
		e.u64(uint64(b.Buf))
		e.u64(b.Off)
	}
	for _, w := range d.P {
		e.u64(uint64(w))
	}
	for _, g := range d.Grid {
		e.u64(uint64(g))
	}
	for _, pt := range d.Patch {
		e.u64(uint64(pt.Target))
		e.u64(uint64(pt.Var))
		e.u64(uint64(pt.Mul))
		e.u64(uint64(pt.Base))
	}
}

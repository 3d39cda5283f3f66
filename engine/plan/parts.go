package plan

import "fmt"

// A weights buffer's content is Data or Parts (Buffer). A backend that
// copies weights into its own memory copies each part to its place (the
// copy it makes anyway); one that reads weights in place joins them once.

// WeightsLen is the number of content bytes a weights buffer has: len(Data),
// or the parts' lengths summed.
func (b *Buffer) WeightsLen() int64 {
	if b.Parts == nil {
		return int64(len(b.Data))
	}
	var n int64
	for _, p := range b.Parts {
		n += int64(len(p))
	}
	return n
}

// CopyWeights copies the first Size bytes of the content into dst, which
// must hold them.
func (b *Buffer) CopyWeights(dst []byte) {
	if b.Parts == nil {
		copy(dst[:b.Size], b.Data)
		return
	}
	off := int64(0)
	for _, p := range b.Parts {
		if off >= b.Size {
			return
		}
		off += int64(copy(dst[off:b.Size], p))
	}
}

// WeightBytes returns the first Size bytes of the content as one slice: Data
// itself, or the parts copied into a new slice.
func (b *Buffer) WeightBytes() []byte {
	if b.Parts == nil {
		return b.Data[:b.Size:b.Size]
	}
	out := make([]byte, b.Size)
	b.CopyWeights(out)
	return out
}

// checkWeights verifies that a weights buffer has content for its size, in
// Data or in Parts, not both, and that other kinds have none.
func (b *Buffer) checkWeights() error {
	if b.Kind != BufWeights {
		if b.Data != nil || b.Parts != nil {
			return fmt.Errorf("buffer %q is not a weights buffer but has Data", b.Name)
		}
		return nil
	}
	if b.Data != nil && b.Parts != nil {
		return fmt.Errorf("weights buffer %q has both Data and Parts", b.Name)
	}
	if n := b.WeightsLen(); n < b.Size {
		return fmt.Errorf("weights buffer %q has %d bytes of data, declared %d", b.Name, n, b.Size)
	}
	return nil
}

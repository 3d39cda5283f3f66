package plan

import "github.com/harkapp/hark/engine/ggml"

// Access is what one binding of a resolved dispatch does to its buffer:
// the byte range [Lo, Hi) from the binding's offset that it may touch
// (for hazards and bounds; Hi == ToEnd runs to the end of the buffer) and
// the bytes it actually reads or writes (Touched; smaller than the range
// when rows are strided).
type Access struct {
	Slot        int
	Lo, Hi      uint64
	Touched     uint64
	Read, Write bool
}

// ToEnd marks a span that runs to the end of its buffer. Span arithmetic
// saturates one below it, so an absurd extent never reads as "to the end"
// and fails a bounds check instead.
const ToEnd = ^uint64(0)

const sat = ToEnd - 1

// span is a binding's byte range relative to its offset, and the bytes in
// it that the kernel touches.
type span struct{ lo, hi, touched uint64 }

func (d *Dispatch) binding(slot int) Binding {
	if slot >= int(d.NBind) {
		return None
	}
	return d.Bind[slot]
}

func (d *Dispatch) access(dst []Access, slot int, read, write bool, s span) []Access {
	if slot >= int(d.NBind) || d.Bind[slot].Buf == NoBuf {
		return dst
	}
	t := s.touched
	if s.hi != ToEnd {
		t = min(t, s.hi-s.lo)
	}
	return append(dst, Access{Slot: slot, Lo: s.lo, Hi: s.hi, Touched: t, Read: read, Write: write})
}

// SatMul and SatAdd are saturating (at ToEnd-1) byte arithmetic.
func SatMul(a, b uint64) uint64 {
	if a != 0 && b >= sat/a {
		return sat
	}
	return a * b
}

func SatAdd(a, b uint64) uint64 {
	if a >= sat-b || b >= sat {
		return sat
	}
	return a + b
}

// mul is a saturating product of non-negative ints (params words).
func mul(a, b int) int {
	return int(min(SatMul(uint64(a), uint64(b)), 1<<62))
}

// rowsExt is the element extent of m rows of n with row stride ld.
func rowsExt(m, ld, n uint64) uint64 {
	if m == 0 || n == 0 {
		return 0
	}
	return SatAdd(SatMul(m-1, ld), n)
}

func elemRows(t ggml.Type, m, ld, n int) span {
	es := uint64(4)
	if t == ggml.F16 || t == ggml.BF16 {
		es = 2
	}
	return span{0, SatMul(rowsExt(uint64(m), uint64(ld), uint64(n)), es), SatMul(SatMul(uint64(m), uint64(n)), es)}
}

func f32Rows(m, ld, n int) span { return elemRows(ggml.F32, m, ld, n) }

func f32Vec(n int) span { return span{0, SatMul(uint64(n), 4), SatMul(uint64(n), 4)} }

func i32Vec(n int) span { return f32Vec(n) }

func toEnd(touched uint64) span { return span{0, ToEnd, touched} }

// broadcastRows is Add's b: ldb 0 repeats one row.
func broadcastRows(m, ld, n int) span {
	if ld == 0 {
		return f32Rows(1, 0, n)
	}
	return f32Rows(m, ld, n)
}

// weightRows is n rows of k elements of type t (the whole buffer when the
// row size is unknown).
func weightRows(t ggml.Type, n, k int) span {
	rb, err := ggml.RowBytes(t, int64(k))
	if err != nil {
		return toEnd(ToEnd)
	}
	b := SatMul(uint64(n), uint64(rb))
	return span{0, b, b}
}

// typedRowsTouched is the bytes of n rows of dim elements of t.
func typedRowsTouched(t ggml.Type, n, dim int) uint64 {
	rb, err := ggml.RowBytes(t, int64(dim))
	if err != nil {
		return 0
	}
	return SatMul(uint64(n), uint64(rb))
}

// groupedRows is RMSNorm's row addressing: row r at (r/inner)*ld +
// (r%inner)*dim.
func groupedRows(rows, inner, dim, ld int) span {
	r, in, dm, l := uint64(rows), uint64(max(inner, 1)), uint64(dim), uint64(ld)
	if r == 0 {
		return span{}
	}
	last := r - 1
	e := SatAdd(SatAdd(SatMul(last/in, l), SatMul(last%in, dm)), dm)
	if last >= in {
		e = max(e, SatAdd(SatMul(last/in-1, l), SatMul(in, dm)))
	}
	t := SatMul(SatMul(r, dm), 4)
	return span{0, SatMul(e, 4), t}
}

func kvElem(t ggml.Type) uint64 {
	if t == ggml.F16 || t == ggml.BF16 {
		return 2
	}
	return 4
}

// newRows is where m rows store their keys: the sequences they span and
// the last position written (rows of one sequence at pos0, pos0+1, ...;
// with FlagPerSeqRows row t of sequence t at pos0).
func newRows(m, pos0 uint64, flags uint32) (seqs, last uint64) {
	if flags&FlagPerSeqRows != 0 {
		return max(m, 1), pos0
	}
	return 1, pos0 + max(m, 1) - 1
}

// cacheWrite is the part of a K or V cache RopeKV writes: the rows' new
// positions of every KV head (of every sequence with FlagPerSeqRows).
func cacheWrite(a *RopeKVArgs, t ggml.Type) span {
	es := kvElem(t)
	m, nkv, hd := uint64(a.M), uint64(a.NKV), uint64(a.HeadDim)
	seqs, pos := newRows(m, uint64(a.Pos0), a.Flags)
	lo := SatMul(SatMul(uint64(a.Pos0), uint64(a.PosStride)), es)
	hi := max(SatMul(SatAdd(SatAdd(SatMul(seqs-1, uint64(a.SeqStride)), SatMul(max(nkv, 1)-1, uint64(a.HeadStride))),
		SatAdd(SatMul(pos, uint64(a.PosStride)), hd)), es), lo)
	return span{lo, hi, SatMul(SatMul(SatMul(m, nkv), hd), es)}
}

// cacheRead is the part of a K or V cache Attention reads: kvLen
// positions of every KV head (of every sequence with FlagPerSeqRows).
func cacheRead(a *AttentionArgs, t ggml.Type) span {
	es := kvElem(t)
	m, nkv, hd, kv := uint64(a.M), uint64(a.NKV), uint64(a.HeadDim), uint64(a.KVLen)
	seqs := uint64(1)
	if a.Flags&FlagPerSeqRows != 0 {
		seqs = max(m, 1)
	}
	ext := uint64(0)
	if kv > 0 && nkv > 0 {
		ext = SatMul(SatAdd(SatAdd(SatMul(seqs-1, uint64(a.SeqStride)), SatMul(nkv-1, uint64(a.HeadStride))),
			SatAdd(SatMul(kv-1, uint64(a.PosStride)), hd)), es)
	}
	return span{0, ext, SatMul(SatMul(SatMul(SatMul(seqs, nkv), kv), hd), es)}
}

// ropeAttentionCache is the part of a K or V cache RopeAttention reads
// and writes: kvLen positions and those its rows store, of every KV head
// (of every sequence with FlagPerSeqRows).
func ropeAttentionCache(a *RopeAttentionArgs, t ggml.Type) span {
	es := kvElem(t)
	m, nkv, hd := uint64(a.M), uint64(a.NKV), uint64(a.HeadDim)
	seqs, last := newRows(m, uint64(a.Pos0), a.Flags)
	n := max(uint64(a.KVLen), last+1) // positions
	if m == 0 || nkv == 0 {
		return span{}
	}
	ext := SatMul(SatAdd(SatAdd(SatMul(seqs-1, uint64(a.SeqStride)), SatMul(nkv-1, uint64(a.HeadStride))),
		SatAdd(SatMul(n-1, uint64(a.PosStride)), hd)), es)
	return span{0, ext, SatMul(SatMul(SatMul(SatMul(seqs, nkv), n), hd), es)}
}

// ropeAttentionMatVecCache is RopeAttentionMatVec's part of a K or V
// cache: RopeAttention's, of f16 elements (its Type is the weights').
func ropeAttentionMatVecCache(a *RopeAttentionMatVecArgs) span {
	r := a.RopeAttention()
	return ropeAttentionCache(&r, ggml.F16)
}

// blockPool is a whole paged KV pool (RopeKVPaged, AttentionPaged): which
// blocks a dispatch touches is data (the block tables), so its span is all
// nBlocks of them.
func blockPool(nBlocks, blockStride int, t ggml.Type) span {
	b := SatMul(SatMul(uint64(nBlocks), uint64(blockStride)), kvElem(t))
	return span{0, b, b}
}

// convInput is Conv1D's x: T steps of cin channels, time- or
// channel-major.
func convInput(a *Conv1DArgs) span {
	if a.Flags&FlagChannelMaj != 0 {
		return f32Rows(a.Cin, a.Ldx, a.T)
	}
	return f32Rows(a.T, a.Ldx, a.Cin)
}

// beamCache is the part of a cache BeamCopy reads and writes: positions
// [pos0, pos0+n) of every sequence.
func beamCache(a *BeamCopyArgs, t ggml.Type) span {
	es := kvElem(t)
	seqs, n := uint64(a.Seqs), uint64(a.N)
	if seqs == 0 || n == 0 || a.Width == 0 {
		return span{}
	}
	lo := SatMul(SatMul(uint64(a.Pos0), uint64(a.PosStride)), es)
	hi := SatMul(SatAdd(SatAdd(SatMul(seqs-1, uint64(a.SeqStride)), SatMul(uint64(a.Pos0)+n-1, uint64(a.PosStride))), uint64(a.Width)), es)
	return span{lo, max(hi, lo), SatMul(SatMul(SatMul(seqs, n), uint64(a.Width)), es)}
}

// alignPath is WhisperAlign's path rows (rows−1−first, 0 when none).
func alignPath(a *WhisperAlignArgs) int { return max(a.Rows-a.First-1, 0) }

// alignWeights is WhisperAlign's w: rows of ldw (the last cols long) of
// each head, up to the last head's.
func alignWeights(a *WhisperAlignArgs) span {
	if a.Heads == 0 || a.Group == 0 || a.Rows == 0 {
		return span{}
	}
	h := a.Heads - 1
	off := SatAdd(uint64(mul(h/a.Group, a.GroupStride)), uint64(mul(h%a.Group, a.HeadStride)))
	end := SatAdd(off, rowsExt(uint64(a.Rows), uint64(a.Ldw), uint64(a.Cols)))
	return span{0, SatMul(end, 4), SatMul(uint64(mul(mul(a.Heads, a.Rows), a.Cols)), 4)}
}

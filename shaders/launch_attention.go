package shaders

import (
	"fmt"
	"slices"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Launch rules of rope, rope_kv (rope.metal) and attention
// (attention.metal).

func init() {
	register(plan.Rope, launchRope)
	register(plan.RopeKV, launchRope)
	register(plan.Attention, launchAttention)
	register(plan.RopeAttention, launchRopeAttention)
}

// attnMaxHead is the largest head size the kernels hold in registers
// (ATTN_MAX_HD in attention.metal).
const attnMaxHead = 256

// attnTileHead is the largest head size whose 32-key K/V tiles fit
// attention_tiled's threadgroup memory (ATTN_TILE_F32/F16).
func attnTileHead(ty ggml.Type) uint32 {
	if ty == ggml.F16 {
		return 128
	}
	return 64
}

// attention_mma's shape (ATTN_MMA_HD, ATTN_MMA_SG in attention.metal):
// head sizes up to 64, two SIMD-groups of 8 rows per threadgroup.
const (
	attnMMAHead = 64
	attnMMASIMD = 2
)

// attention_mma_tc's shape (cuda/native/attention_mma.cu): head sizes
// up to 64 (attention_mma_tc_*) or 128 (attention_mma_tc_hd128_*), two
// warps of 16 rows per block.
const (
	attnTCHead    = 128
	attnTCRows    = 32
	attnTCThreads = 64
)

// attnTCName is the tensor-core attention variant for head size hd and
// K/V suffix suf: the native kernel, or where the host loaded no native
// module (twin) its MSL twin of the same blocking (attention_mma16.metal).
func attnTCName(hd uint32, suf string, twin bool) string {
	name := "attention_mma_tc"
	if twin {
		name = "attention_mma16"
	}
	if hd > attnMMAHead {
		return name + "_hd128" + suf
	}
	return name + suf
}

// attnMMA16Smem is the twins' dynamic threadgroup memory (attention_mma16):
// a 32-key tile of the instance's head size (64 or 128; K's, then V's)
// and, per SIMD-group, 16 × 32 scores, two 8×8 diagonal blocks and 16
// words, in floats.
func attnMMA16Smem(hd uint32) uint32 {
	tileHD := uint32(attnMMAHead)
	if hd > attnMMAHead {
		tileHD = attnTCHead
	}
	return 4 * (32*tileHD + 2*(512+128+16))
}

// attnGroupChunks is attention_group's most chunks (SIMD-groups) of a
// threadgroup (ATTN_GROUP_SG in attention.metal).
const attnGroupChunks = 16

// AttnMaxThreads bounds a threadgroup of the decode attention kernels
// (attention_{f32,f16}, attention_group_f16): their CUDA entries are
// compiled for at most this many threads (cuda/gen), so ptxas may give them
// 128 registers a thread; under the 1024-thread bound of the other entries
// (64 registers) they spilled 250 bytes a thread to local memory (issue
// #34, bench/cuda/20261129-issue34-r6). attention_group's chunks
// (attnGroupChunks SIMD-groups) fit under it.
const AttnMaxThreads = 32 * attnGroupChunks

// attnMaxKV bounds the keys of one dispatch, as the CPU backend does.
const attnMaxKV = 1 << 22

// maxScratch bounds Launch.Scratch (and so a bad dispatch's allocation).
const maxScratch = 1 << 31

// cacheSuffix names the K/V (cache) type variant of a kernel.
func cacheSuffix(k plan.Kernel, ty ggml.Type) (string, error) {
	switch ty {
	case ggml.F32:
		return "_f32", nil
	case ggml.F16:
		return "_f16", nil
	}
	return "", fmt.Errorf("shaders: %s has no MSL variant for type %v (f16 or f32)", k, ty)
}

func launchRope(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	var hd, ropeDim, heads, m uint32
	name := "rope"
	if d.Kernel == plan.Rope {
		r := plan.DecodeRope(d)
		hd, ropeDim, heads, m = uint32(r.HeadDim), uint32(r.RotDims()), uint32(r.NHead), uint32(r.M)
	} else {
		a := plan.DecodeRopeKV(d)
		if uint64(a.NHead)+uint64(a.NKV) > 1<<16 {
			return dst, fmt.Errorf("shaders: rope_kv with %d+%d heads", a.NHead, a.NKV)
		}
		hd, ropeDim = uint32(a.HeadDim), uint32(a.RotDims())
		heads, m = uint32(a.NHead+a.NKV), uint32(a.M)
		suf, err := cacheSuffix(d.Kernel, d.Type)
		if err != nil {
			return dst, err
		}
		name = "rope_kv" + suf
	}
	if m == 0 || heads == 0 {
		return dst, nil
	}
	return append(dst, Launch{
		Function: name,
		Groups:   [3]uint32{m, heads, 1},
		Threads:  [3]uint32{simdThreads(max(ropeDim/2, hd/4), normKnob(t.RopeThreads, 64), t), 1, 1},
	}), nil
}

func launchAttention(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeAttention(d)
	s := attnShapeOf(a.HeadDim, a.NHead, a.M, a.KVLen, a.Flags)
	s.probs = d.NBind > plan.SlotAttentionProbs && d.Bind[plan.SlotAttentionProbs].Buf != plan.NoBuf
	s.a16 = attentionAligned(d, &a, t)
	return attentionLaunches(d, t, dst, s)
}

// attentionAligned reports whether an f32 Attention's q rows and K rows
// start 16-byte aligned for attention_ticket_f32_a16 (attn_dot_a16's float4
// loads): the host promises its buffers' starts (t.Align16), the Q and K
// bindings' offsets and every patch of them keep it, and the head size,
// the q row stride (past one row) and the cache strides are whole float4s.
func attentionAligned(d *plan.Dispatch, a *plan.AttentionArgs, t *Tuning) bool {
	if !rowsAligned16(d, t, ggml.F32, a.HeadDim, []plan.Binding{a.Q, a.K}, plan.PatchAttentionQOff, plan.PatchAttentionKOff) {
		return false
	}
	const elems = 4 // f32 elements a 16-byte word
	return (a.M <= 1 || a.Ldq%elems == 0) && a.PosStride%elems == 0 && a.HeadStride%elems == 0 && a.SeqStride%elems == 0
}

// launchRopeAttention: attention's launches, the rope_attention instances
// (rope_attention.metal), each SIMD-group's slot added to the scratch.
func launchRopeAttention(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeRopeAttention(d)
	s := attnShapeOf(a.HeadDim, a.NHead, a.M, a.KVLen, a.Flags)
	s.rope, s.a16 = true, ropeAttentionAligned(d, &a, t)
	return attentionLaunches(d, t, dst, s)
}

// ropeAttentionAligned reports whether RopeAttention's K rows start 16-byte
// aligned for the "_a16" instances (attn_dot_a16: 16-byte loads of the K
// rows and of the slots' q and new key): the host promises its buffers'
// starts (t.Align16, as for the mat-vecs' weights), the K binding's offset,
// every patch of it and the cache strides keep it, and the head size is
// whole 16-element chunks. f16 caches only.
func ropeAttentionAligned(d *plan.Dispatch, a *plan.RopeAttentionArgs, t *Tuning) bool {
	if !rowsAligned16(d, t, ggml.F16, a.HeadDim, []plan.Binding{a.K}, plan.PatchOffset0+plan.SlotRopeAttentionK) {
		return false
	}
	const elems = 8 // f16 elements a 16-byte word
	return a.PosStride%elems == 0 && a.HeadStride%elems == 0 && a.SeqStride%elems == 0
}

// rowsAligned16 is what the "_a16" attention instances (attn_dot_a16's
// 16-byte loads) ask of every dispatch before their own strides: the host
// promises its buffers' starts (t.Align16), the cache is of type ty, the
// head size is whole 16-element chunks, and the bindings refs start, and
// every patch of the targets moves them, by whole 16 bytes.
func rowsAligned16(d *plan.Dispatch, t *Tuning, ty ggml.Type, headDim int, refs []plan.Binding, targets ...plan.PatchTarget) bool {
	if t.Align16 != Aligned16 || d.Type != ty || headDim%16 != 0 {
		return false
	}
	for _, r := range refs {
		if r.Off%16 != 0 {
			return false
		}
	}
	for _, p := range d.Patch[:d.NPatch] {
		if slices.Contains(targets, p.Target) && (p.Base%16 != 0 || p.Mul%16 != 0) {
			return false
		}
	}
	return true
}

// attnShape is what the attention launch rules read of a dispatch; rope:
// a RopeAttention dispatch (never probs); a16: its K rows 16-byte aligned
// (ropeAttentionAligned, attentionAligned).
type attnShape struct {
	hd, nHead, m, kvLen uint32
	flags               uint32
	probs, rope, a16    bool
}

// attnShapeOf is the attnShape fields Attention and RopeAttention share.
func attnShapeOf(hd, nHead, m, kvLen int, flags uint32) attnShape {
	return attnShape{hd: uint32(hd), nHead: uint32(nHead), m: uint32(m), kvLen: uint32(kvLen), flags: flags}
}

func attentionLaunches(d *plan.Dispatch, t *Tuning, dst []Launch, a attnShape) ([]Launch, error) {
	hd, nHead, m, kvLen := a.hd, a.nHead, a.m, a.kvLen
	if m == 0 || nHead == 0 {
		return dst, nil
	}
	if hd > attnMaxHead {
		return dst, fmt.Errorf("shaders: attention head size %d beyond the supported %d", hd, attnMaxHead)
	}
	if kvLen > attnMaxKV {
		return dst, fmt.Errorf("shaders: attention kvLen %d beyond the supported %d", kvLen, attnMaxKV)
	}
	suf, err := cacheSuffix(d.Kernel, d.Type)
	if err != nil {
		return dst, err
	}
	rows := min(normKnob(t.AttnRows, 4), m)
	rows = min(rows, max(1, min(normKnob(t.MaxThreads, 1024), AttnMaxThreads)/32))
	nc := uint32(1)
	if uint64(m)*uint64(nHead) < uint64(normKnob(t.AttnSplitBelow, 256)) {
		chunk := max(32, normKnob(t.AttnChunk, 256))
		nc = max(1, (kvLen+chunk-1)/chunk)
		if t.Cores > 0 && t.AttnSplitGroups > 0 {
			// the GPU's size bounds the chunks (Tuning.AttnSplitGroups)
			per := uint64(nHead) * uint64((m+rows-1)/rows)
			target := uint64(t.Cores) * uint64(t.AttnSplitGroups)
			nc = uint32(min(uint64(nc), max(1, target/per)))
		}
		if t.AttnMaxChunks > 0 {
			nc = min(nc, t.AttnMaxChunks) // the merge's work per thread
		}
	}
	prefix := "attention"
	if a.rope {
		prefix = "rope_attention"
	}
	main := Launch{
		Function: prefix + suf,
		Groups:   [3]uint32{nc, nHead, (m + rows - 1) / rows},
		Threads:  [3]uint32{32 * rows, 1, 1},
	}
	probs := a.probs
	// RopeAttention's slots (rope_attention.metal): 3·hd floats per (row,
	// head, chunk), after the partials
	slots := func(chunks uint32) uint64 {
		if !a.rope {
			return 0
		}
		return uint64(m) * uint64(nHead) * uint64(chunks) * 3 * uint64(hd)
	}
	if nc == 1 {
		oneSeq := m > 1 && a.flags&plan.FlagPerSeqRows == 0
		switch {
		case a.rope:
			main.Scratch = uint32(4 * (4 + slots(1))) // (rows of one sequence are one row: no other form applies)
			if a.a16 {
				main.Function += "_a16"
			}
		case oneSeq && t.AttnMMA != 0 && !probs && hd%8 == 0 && hd <= attnTCHead:
			// tensor cores (CUDA's sm_80 module), 16 rows a warp; the
			// twins where no native module is loaded (MatMulMMA unset)
			twin := t.MatMulMMA == 0
			main.Function = attnTCName(hd, suf, twin)
			main.Groups[2] = (m + attnTCRows - 1) / attnTCRows
			main.Threads[0] = attnTCThreads
			if twin {
				main.Threadgroup = attnMMA16Smem(hd)
			}
		case oneSeq && hd%8 == 0 && hd <= attnMMAHead:
			// 8×8 simdgroup products, 8 rows per SIMD-group
			main.Function = "attention_mma" + suf
			main.Groups[2] = (m + 8*attnMMASIMD - 1) / (8 * attnMMASIMD)
			main.Threads[0] = 32 * attnMMASIMD
		case oneSeq && rows > 1 && hd <= attnTileHead(d.Type):
			main.Function = "attention_tiled" + suf // K/V tiles shared by the rows
		}
		return append(dst, main), nil
	}
	if kvLen <= t.AttnGroupKeys && !probs && d.Type == ggml.F16 {
		// a short cache: the chunks of a (row, head) are the SIMD-groups
		// of one threadgroup, merged there (no attention_merge launch).
		// f16 caches only: Whisper's f32 self-attention cache measured
		// slower so on the H200 (decoder 0.80 against 0.77 ms a token,
		// bench/cuda/20261129-issue34-r5), the LLMs' f16 faster (409
		// against 398 tok/s)
		main.Function = prefix + "_group" + suf
		main.Groups = [3]uint32{1, nHead, m}
		main.Threads[0] = 32 * min(max(2, (kvLen+31)/32), attnGroupChunks, max(2, normKnob(t.MaxThreads, 1024)/32))
		if a.rope {
			scratch := 4 * (4 + slots(main.Threads[0]/32))
			if scratch > maxScratch {
				return dst, fmt.Errorf("shaders: rope_attention scratch of %d bytes too large", scratch)
			}
			main.Scratch = uint32(scratch)
			if a.a16 {
				main.Function += "_a16"
			}
		}
		return append(dst, main), nil
	}
	// partials: ATTN_SCRATCH_HEAD floats, then (max, sum, acc[hd]) per
	// (row, head, chunk)
	scratch := 4 * (4 + uint64(m)*uint64(nHead)*uint64(nc)*uint64(hd+2) + slots(nc))
	if scratch > maxScratch {
		return dst, fmt.Errorf("shaders: attention split scratch of %d bytes too large", scratch)
	}
	main.Scratch = uint32(scratch)
	if tickets := nHead * m; t.AttnTicket == TicketMerge && !probs && uint64(tickets) <= TicketWords {
		// one launch: one SIMD-group a threadgroup, each (row, head)'s
		// last chunk to finish merges (attention.metal, attn_ticket)
		main.Function = prefix + "_ticket" + suf
		if a.a16 && !a.rope {
			main.Function += "_a16" // (f32 only: attentionAligned)
		}
		main.Groups = [3]uint32{nc, nHead, m}
		main.Threads[0] = 32
		main.Tickets = tickets
		return append(dst, main), nil
	}
	merge := Launch{
		Function: prefix + "_merge",
		Groups:   [3]uint32{nHead, m, 1},
		Threads:  [3]uint32{simdThreads(hd, 128, t), 1, 1},
		Scratch:  uint32(scratch),
	}
	return append(dst, main, merge), nil
}

package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Launch rules of rope_kv_paged and attention_paged (sequences.metal):
// decode rows of M sequences, each at its own position over its own KV
// blocks.

func init() {
	register(plan.RopeKVPaged, launchRopeKVPaged)
	register(plan.AttentionPaged, launchAttentionPaged)
}

func launchRopeKVPaged(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeRopeKVPaged(d)
	if uint64(a.NHead)+uint64(a.NKV) > 1<<16 {
		return dst, fmt.Errorf("shaders: rope_kv_paged with %d+%d heads", a.NHead, a.NKV)
	}
	suf, err := cacheSuffix(d.Kernel, d.Type)
	if err != nil {
		return dst, err
	}
	heads, m := uint32(a.NHead+a.NKV), uint32(a.M)
	if m == 0 || heads == 0 {
		return dst, nil
	}
	hd := uint32(a.HeadDim)
	return append(dst, Launch{
		Function: "rope_kv_paged" + suf,
		Groups:   [3]uint32{m, heads, 1},
		Threads:  [3]uint32{simdThreads(max(uint32(a.RotDims())/2, hd/4), normKnob(t.RopeThreads, 64), t), 1, 1},
	}), nil
}

// attnPagedMaxSG is attention_paged's most SIMD-groups a threadgroup
// (ATTN_PAGED_MAX_SG: its partials' threadgroup arrays), and
// AttnPagedMaxThreads its most threads (the bound its CUDA entry is
// compiled for, so its registers are not capped at a 1,024-thread block's).
const (
	attnPagedMaxSG      = 8
	AttnPagedMaxThreads = 32 * attnPagedMaxSG
)

// fcPagedValues is attention_paged's function constant fc_paged_values
// (Tuning.AttnPagedValues), and PagedValuesBatched its batched loop.
const (
	fcPagedValues      = 24
	PagedValuesBatched = 2
	// PagedSplitOff is an AttnPagedChunk no table reaches: one threadgroup
	// a row.
	PagedSplitOff = 1 << 22
)

// pagedConstants are the two values' constants (no allocation a launch).
var pagedConstants = [2][]Constant{{{fcPagedValues, 1}}, {{fcPagedValues, PagedValuesBatched}}}

func launchAttentionPaged(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeAttentionPaged(d)
	if a.M == 0 || a.NHead == 0 {
		return dst, nil
	}
	if a.HeadDim > attnMaxHead {
		return dst, fmt.Errorf("shaders: attention_paged head size %d beyond the supported %d", a.HeadDim, attnMaxHead)
	}
	maxKeys := uint64(a.TableStride) * uint64(a.BlockSize)
	if maxKeys > attnMaxKV {
		return dst, fmt.Errorf("shaders: attention_paged tables of %d blocks of %d beyond the supported %d keys", a.TableStride, a.BlockSize, attnMaxKV)
	}
	suf, err := cacheSuffix(d.Kernel, d.Type)
	if err != nil {
		return dst, err
	}
	if pagedAligned(d, &a, t) {
		suf += "_a16"
	}
	l := Launch{
		Function:  "attention_paged" + suf,
		Groups:    [3]uint32{1, uint32(a.NHead), uint32(a.M)},
		Threads:   [3]uint32{32 * min(max(t.AttnPagedSIMDGroups, 1), attnPagedMaxSG), 1, 1},
		Constants: pagedConstants[0],
	}
	if t.AttnPagedValues == PagedValuesBatched {
		l.Constants = pagedConstants[1]
	}
	if nc := pagedChunks(uint64(a.NHead), uint64(a.M), maxKeys, uint64(a.HeadDim), t); nc > 1 {
		// partials: ATTN_SCRATCH_HEAD floats, then (max, sum, acc[hd]) per
		// (row, head, chunk); the ticket words, one per (row, head)
		l.Groups[0] = nc
		l.Scratch = uint32(4 * (4 + uint64(a.M)*uint64(a.NHead)*uint64(nc)*uint64(a.HeadDim+2)))
		l.Tickets = uint32(a.NHead * a.M)
	}
	return append(dst, l), nil
}

// pagedAligned reports whether an f16 AttentionPaged's K rows and q rows
// start 16-byte aligned for attention_paged_f16_a16 (attn_dot_a16's loads):
// the host promises its buffers' starts (t.Align16), the Q and K bindings'
// offsets and every patch of them keep it, and the head size is whole
// 16-element chunks, the q row stride whole float4s and the cache strides
// whole 8-half words.
func pagedAligned(d *plan.Dispatch, a *plan.AttentionPagedArgs, t *Tuning) bool {
	if !rowsAligned16(d, t, ggml.F16, a.HeadDim, []plan.Binding{a.Q, a.K},
		plan.PatchOffset0+plan.SlotAttentionPagedQ, plan.PatchOffset0+plan.SlotAttentionPagedK) {
		return false
	}
	return (a.M <= 1 || a.Ldq%4 == 0) && a.PosStride%8 == 0 && a.HeadStride%8 == 0 && a.BlockStride%8 == 0
}

// pagedChunks is attention_paged's chunks a row (the grid's x): enough
// that a row as deep as the table, maxKeys, has chunks of about
// Tuning.AttnPagedChunk keys, with at most Cores·AttnPagedSplitGroups
// threadgroups in all and the partials within maxScratch; the kernel
// gives each row the chunks its keys fill. One (no split) where the host
// binds no ticket buffer, whose words the split's merge counts in, or has
// too few.
func pagedChunks(nHead, m, maxKeys, hd uint64, t *Tuning) uint32 {
	pairs := nHead * m
	if t.AttnTicket != TicketMerge || pairs > TicketWords {
		return 1
	}
	chunk := max(32, uint64(normKnob(t.AttnPagedChunk, 512)))
	nc := (maxKeys + chunk - 1) / chunk
	if t.Cores > 0 {
		nc = min(nc, uint64(t.Cores)*uint64(normKnob(t.AttnPagedSplitGroups, 16))/pairs)
	}
	nc = min(nc, (maxScratch/4-4)/(pairs*(hd+2)))
	return uint32(max(1, nc))
}

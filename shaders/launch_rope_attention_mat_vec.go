package shaders

import (
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Launch rule of RopeAttentionMatVec (rope_attention_mat_vec.metal):
// decode's attention and its output product in one launch where the
// tuning folds them (Tuning.AttnFoldO) and the attention alone is one
// threadgroup a head (the launch a threadgroup per Tuning.AttnFoldSlices
// slice of Wo's rows and head); otherwise the attention's own launches (as
// RopeAttention's: the dispatch begins with its record) and the product
// as rope_attention_mat_vec_o, mat_vec's body and geometry.

func init() {
	register(plan.RopeAttentionMatVec, launchRopeAttentionMatVec)
}

// ramvSIMDGroups is the fewest SIMD-groups of a folded launch's
// threadgroup (at most attnGroupChunks, the entries' thread bound): the
// product's rows are spread over its threads (576 rows: 1-2 a thread).
const ramvSIMDGroups = 16

// FoldO is the Tuning.AttnFoldO value that folds the output product into
// the attention launch.
const FoldO = 2

// ramvTypes are the weight types rope_attention_mat_vec has instances of
// (engine/llm emits the kernel for these only).
var ramvTypes = map[ggml.Type]bool{ggml.F32: true, ggml.F16: true, ggml.Q8_0: true, ggml.Q4_0: true}

func launchRopeAttentionMatVec(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeRopeAttentionMatVec(d)
	if !ramvTypes[d.Type] {
		return dst, fmt.Errorf("shaders: rope_attention_mat_vec: weight type %s is not supported (f32, f16, q8_0, q4_0)", d.Type)
	}
	ra := a.RopeAttention()
	rd := ra.Dispatch()
	rd.Patch, rd.NPatch = d.Patch, d.NPatch // the K binding's patches, for the alignment rule
	aligned := ropeAttentionAligned(&rd, &ra, t)
	base := len(dst)
	dst, err := attentionLaunches(&rd, t, dst, attnShape{hd: uint32(a.HeadDim), nHead: uint32(a.NHead), m: uint32(a.M),
		kvLen: uint32(a.KVLen), flags: a.Flags, rope: true, a16: aligned})
	if err != nil || len(dst) == base {
		return dst, err
	}
	// one launch without a ticket: unsplit, or attention_group's one
	// threadgroup a head
	hd, nHead, kvLen := uint32(a.HeadDim), uint32(a.NHead), uint32(a.KVLen)
	n := uint64(hd) * uint64(nHead)
	// the slices of Wo's rows (a ticket word each), at most one a row
	slices := uint32(min(uint64(max(1, t.AttnFoldSlices)), n, TicketWords))
	if oneGroup := len(dst) == base+1 && dst[base].Tickets == 0; t.AttnFoldO == FoldO && oneGroup && a.M == 1 &&
		n <= 1<<20 && !ramvNarrower(d.Type, t) && ramvOneWave(slices, nHead, t) {
		// the chunks: rope_attention_group's (the kernel computes the same);
		// the threadgroup at least ramvSIMDGroups for the product
		maxSG := min(attnGroupChunks, max(2, normKnob(t.MaxThreads, 1024)/32))
		nc := min(max(2, (kvLen+31)/32), maxSG)
		sg := min(max(nc, ramvSIMDGroups), maxSG)
		scratch := 4 * (4 + uint64(slices)*uint64(nHead)*uint64(nc)*3*uint64(hd) + uint64(nHead)*n + uint64(slices-1)*n)
		if scratch > maxScratch {
			return dst, fmt.Errorf("shaders: rope_attention_mat_vec scratch of %d bytes too large", scratch)
		}
		fn := "rope_attention_mat_vec"
		if aligned {
			fn += "_a16"
		}
		dst[base] = Launch{Function: fn, Groups: [3]uint32{slices, nHead, 1}, Threads: [3]uint32{32 * sg, 1, 1},
			Scratch: uint32(scratch), Tickets: slices, Constants: ramvConstants[ramvLayouts[d.Type]]}
		return dst, nil
	}
	mv := a.MatVec().Dispatch()
	first := len(dst)
	// mat_vec's launch rule, its 8-bit-activation instances included
	// (rope_attention_mat_vec_o_<type>_q8x; no pre-pass: x, the attention
	// output, is made in this launch)
	dst, err = matVecLaunches(&mv, t, dst, false)
	if err != nil {
		return dst, err
	}
	for i := first; i < len(dst); i++ {
		dst[i].Function = "rope_attention_mat_vec_o_" + strings.TrimPrefix(dst[i].Function, "mat_vec_")
	}
	return dst, nil
}

// ramvNarrower reports whether the folded product would load weights of
// type ty in narrower words than its own launch: f16 where the tuning
// promises 16-byte aligned rows (Tuning.Align16), which
// rope_attention_mat_vec_o_f16_a16 reads 16 bytes a load and the fold 2
// (w_f16). On an H200 the SmolLM2
// shape's f16 tg128 lost 4.5% folded, q8_0 and q4_0 (repacked: 16-byte
// loads both ways) 0.4-1.8% or nothing (bench/cuda/20261201-launch34), so
// such a dispatch keeps its two launches.
func ramvNarrower(ty ggml.Type, t *Tuning) bool {
	return ty == ggml.F16 && t.Align16 == Aligned16
}

// ramvOneWave reports whether the folded launch's slices·nHead
// threadgroups fit the GPU's multiprocessors at once (where the tuning
// knows them, Tuning.Cores): each holds 16 SIMD-groups of up to 128
// registers a thread, one a multiprocessor, so a second wave would repeat
// the attention's whole latency. On an H200 (132) the SmolLM2 shape's 16
// slices (144 threadgroups) ran tg128 21% slower than 8 (72;
// bench/cuda/20261201-launch34); the 1B shape's 32 heads keep their two
// launches.
func ramvOneWave(slices, nHead uint32, t *Tuning) bool {
	return t.Cores == 0 || uint64(slices)*uint64(nHead) <= uint64(t.Cores)
}

// fcRopeAttentionMatVecW is rope_attention_mat_vec's function constant:
// its weights' type and layout (RAMV_* in rope_attention_mat_vec.metal).
const fcRopeAttentionMatVecW = 23

// ramvLayouts are the RAMV_* codes of the weight types in the file's
// layout; ramvRepacked of the repacked q8_0 and q4_0 (ForLayouts).
var (
	ramvLayouts  = map[ggml.Type]uint32{ggml.F32: 0, ggml.F16: 1, ggml.Q8_0: 2, ggml.Q4_0: 3}
	ramvRepacked = map[ggml.Type]uint32{ggml.Q8_0: 4, ggml.Q4_0: 5}
)

// ramvConstants[code] is the constants of a launch with RAMV code code
// (shared, read-only slices: launches do not allocate).
var ramvConstants [6][]Constant

func init() {
	for i := range ramvConstants {
		ramvConstants[i] = []Constant{{fcRopeAttentionMatVecW, uint32(i)}}
	}
}

// ramvForLayout is ForLayouts' step for a RopeAttentionMatVec launch l
// whose weights (of type t) are repacked: the folded launch reads them by
// its constant, the product's own launch by its "_rp" instance; the
// attention's launches do not read them.
func ramvForLayout(l *Launch, t ggml.Type) error {
	switch {
	case l.Function == "rope_attention_mat_vec" || l.Function == "rope_attention_mat_vec_a16":
		code, ok := ramvRepacked[t]
		if !ok {
			return fmt.Errorf("shaders: rope_attention_mat_vec has no repacked layout of %s", t)
		}
		l.Constants = ramvConstants[code]
	case strings.HasPrefix(l.Function, "rope_attention_mat_vec_o_"):
		fn, err := RepackedFunction(l.Function)
		if err != nil {
			return err
		}
		l.Function = fn
	}
	return nil
}

package shaders

import (
	"fmt"

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
// (ATTN_PAGED_MAX_SG: its partials' threadgroup arrays).
const attnPagedMaxSG = 8

func launchAttentionPaged(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeAttentionPaged(d)
	if a.M == 0 || a.NHead == 0 {
		return dst, nil
	}
	if a.HeadDim > attnMaxHead {
		return dst, fmt.Errorf("shaders: attention_paged head size %d beyond the supported %d", a.HeadDim, attnMaxHead)
	}
	if uint64(a.TableStride)*uint64(a.BlockSize) > attnMaxKV {
		return dst, fmt.Errorf("shaders: attention_paged tables of %d blocks of %d beyond the supported %d keys", a.TableStride, a.BlockSize, attnMaxKV)
	}
	suf, err := cacheSuffix(d.Kernel, d.Type)
	if err != nil {
		return dst, err
	}
	return append(dst, Launch{
		Function: "attention_paged" + suf,
		Groups:   [3]uint32{1, uint32(a.NHead), uint32(a.M)},
		Threads:  [3]uint32{32 * min(max(t.AttnPagedSIMDGroups, 1), attnPagedMaxSG), 1, 1},
	}), nil
}

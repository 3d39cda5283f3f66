package msltest

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// attention_merge's two forms: up to 64 chunks the chunk weights are
// computed once into threadgroup memory, more take attn_combine. 32-key
// chunks with no cap: the Whisper decoder's cross-attention shape (1500
// keys, 6 heads of 64: 47 chunks), with and without probs, a window that
// leaves most chunks no key, and 2100-2200 keys (66-69 chunks), f32 and f16 caches, against the CPU.
// Then the same cases with the merge in the split's own launch
// (Tuning.AttnTicket: attention_ticket_*; probs keep the merge launch),
// whose output must be the merge launch's bit for bit.
func TestAttentionMergeChunks(t *testing.T) {
	tune := shaders.Tuning{Family: "merge", SIMDWidth: 32, MaxThreads: 1024, AttnRows: 1, AttnChunk: 32, AttnSplitBelow: 1 << 30}
	ticket := tune
	ticket.Family, ticket.AttnTicket = "ticket", shaders.TicketMerge
	defer func() { kitTune = nil }()
	for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
		for i, c := range []attnCase{
			{hd: 64, nHead: 6, nKV: 6, m: 1, kvLen: 1500, pos0: 0},
			{hd: 64, nHead: 6, nKV: 6, m: 2, kvLen: 1500, pos0: 0, probs: true},
			{hd: 64, nHead: 2, nKV: 1, m: 1, kvLen: 1500, pos0: 1499, flags: plan.FlagCausal, window: 400}, // chunks with no key
			{hd: 64, nHead: 2, nKV: 1, m: 1, kvLen: 2200, pos0: 2199, flags: plan.FlagCausal},
			{hd: 20, nHead: 2, nKV: 2, m: 3, kvLen: 2100, pos0: 2099, flags: plan.FlagCausal | plan.FlagPerSeqRows, window: 1000},
		} {
			c.ty = ty
			suf := map[ggml.Type]string{ggml.F32: "_f32", ggml.F16: "_f16"}[ty]
			kitTune = &tune
			e, fns, merged := runAttnCase(t, rand.New(rand.NewPCG(34, uint64(i))), c)
			require.Equal(t, []string{"attention" + suf, "attention_merge"}, fns)
			t.Logf("%s %d keys, %d heads, %d rows: worst relative error %.3g", ty, c.kvLen, c.nHead, c.m, e)
			kitTune = &ticket
			_, fns, got := runAttnCase(t, rand.New(rand.NewPCG(34, uint64(i))), c)
			if c.probs {
				require.Equal(t, []string{"attention" + suf, "attention_merge"}, fns)
			} else {
				require.Equal(t, []string{"attention_ticket" + suf}, fns)
			}
			require.Equal(t, merged, got, "the ticket's merge against attention_merge")
		}
	}
}

// TestAttentionTicketAligned: attention_ticket_f32_a16 (q and the K rows in
// float4 loads under Tuning.Align16; the values in 16-key batches) on
// decode rows whose q and K/V rows are whole 16-byte words: Whisper's
// cross-attention (1,500 f32 keys, 6 heads of 64) and a causal 700-key
// cache of 80-dim heads shared by two query heads each, with a window,
// against the float64 reference; padded rows keep attention_ticket_f32.
// The device's tuning on a GPU, the cuda family's in the executor.
func TestAttentionTicketAligned(t *testing.T) {
	be, tun := deviceTuning(t)
	if _, ok := be.Device().(interface{ Tuning() shaders.Tuning }); !ok {
		tun = shaders.TuningFor("cuda")
		be = be.WithTuning(tun)
	}
	r := rand.New(rand.NewPCG(34, 18))
	for _, c := range []attnCase{
		{hd: 64, nHead: 6, nKV: 6, m: 1, kvLen: 1500, aligned: true},
		{hd: 80, nHead: 4, nKV: 2, m: 1, kvLen: 700, pos0: 699, flags: plan.FlagCausal, window: 300, aligned: true},
		{hd: 64, nHead: 6, nKV: 6, m: 1, kvLen: 1500},
	} {
		c.ty = ggml.F32
		want := "attention_ticket_f32"
		if c.aligned {
			want += "_a16"
		}
		require.Equal(t, want, attnExactCase(t, be, &tun, r, c), "%+v", c)
	}
}

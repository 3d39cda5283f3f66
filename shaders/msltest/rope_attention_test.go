package msltest

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestRopeAttentionKernel: RopeAttention (rope_attention.metal: rope_kv's
// rotation and cache write in the attention launch) against the CPU, whose
// RopeAttention is RopeKV then Attention bit for bit (engine/cpu): decode
// rows unsplit, split and merged, and (the cuda family) grouped; beams;
// a window; NeoX with a partial rope; no freqs; a head under 32 lanes; a
// new key the row does not see (kvLen before it) and keys after it (not
// causal). The caches start random, so a write past the row's position
// shows as a difference; the qkv rows must come back unchanged. Under
// TestKernelsOtherTunings it runs each tuning's geometry.
func TestRopeAttentionKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 70))
	// the launches the backend under test runs (for the record of which
	// instances ran): kitTune's, a device's own, or Default's
	tune := &shaders.Default
	if d, ok := TestBackend(t).Device().(interface{ Tuning() shaders.Tuning }); ok {
		tun := d.Tuning()
		tune = &tun
	}
	if kitTune != nil {
		tune = kitTune
	}
	causal, beams := plan.FlagCausal, plan.FlagPerSeqRows
	used := map[string]bool{}
	worst := 0.0
	for _, ty := range []ggml.Type{ggml.F32, ggml.F16} {
		for _, c := range []struct {
			hd, nHead, nKV, m, kvLen, pos0, flags, window, ropeDim int
			mode                                                   plan.RopeMode
			noFreqs                                                bool
			aligned                                                bool // K rows of whole 16-byte words ("_a16" under Align16)
		}{
			{hd: 64, nHead: 4, nKV: 2, m: 1, kvLen: 700, pos0: 699, flags: causal},
			{hd: 64, nHead: 9, nKV: 3, m: 1, kvLen: 20, pos0: 19, flags: causal},
			{hd: 64, nHead: 4, nKV: 1, m: 1, kvLen: 1500, pos0: 1499, flags: causal},
			{hd: 64, nHead: 6, nKV: 6, m: 1, kvLen: 1, pos0: 0, flags: causal},
			{hd: 64, nHead: 2, nKV: 2, m: 3, kvLen: 300, pos0: 290, flags: causal | beams},
			{hd: 64, nHead: 4, nKV: 2, m: 1, kvLen: 700, pos0: 699, flags: causal, window: 37},
			{hd: 80, nHead: 4, nKV: 2, m: 1, kvLen: 90, pos0: 89, flags: causal, mode: plan.RopeNeoX, ropeDim: 32},
			{hd: 64, nHead: 4, nKV: 4, m: 1, kvLen: 45, pos0: 44, flags: causal, noFreqs: true},
			{hd: 20, nHead: 2, nKV: 1, m: 1, kvLen: 33, pos0: 32, flags: causal},
			{hd: 64, nHead: 2, nKV: 1, m: 1, kvLen: 10, pos0: 15},
			{hd: 64, nHead: 2, nKV: 1, m: 1, kvLen: 50, pos0: 20},
			{hd: 64, nHead: 9, nKV: 3, m: 1, kvLen: 20, pos0: 19, flags: causal, aligned: true},
			{hd: 80, nHead: 4, nKV: 2, m: 1, kvLen: 90, pos0: 89, flags: causal, aligned: true},
			{hd: 64, nHead: 2, nKV: 2, m: 3, kvLen: 300, pos0: 290, flags: causal | beams, aligned: true},
		} {
			w := (c.nHead + 2*c.nKV) * c.hd
			ldq, ldo := w+5, c.nHead*c.hd+3
			seqs := 1
			if c.flags&beams != 0 {
				seqs = c.m
			}
			npos := max(c.kvLen, c.pos0+1)
			ps := c.hd + 2
			hs := npos*ps + 1
			ss := c.nKV*hs + 3
			if c.aligned {
				ps, hs, ss = c.hd, npos*c.hd, c.nKV*npos*c.hd
			}
			cells := seqs * ss
			kv := func() []byte {
				v := kitRand(r, cells, 1)
				if ty == ggml.F16 {
					return kitF16(v)
				}
				return kitF32(v)
			}
			rd := c.ropeDim
			if rd == 0 {
				rd = c.hd
			}
			var freqs []byte
			if !c.noFreqs {
				freqs = kitF32(ropeFreqs(rd, 10000))
			}
			qkv := kitF32(kitRand(r, (c.m-1)*ldq+w, 1))
			d := plan.RopeAttentionArgs{Type: ty, HeadDim: c.hd, NHead: c.nHead, NKV: c.nKV, M: c.m, Ldq: ldq, Ldo: ldo,
				KVLen: c.kvLen, Pos0: c.pos0, Flags: uint32(c.flags), Scale: float32(1 / math.Sqrt(float64(c.hd))),
				HeadStride: hs, PosStride: ps, SeqStride: ss, Window: c.window, Mode: c.mode, RopeDim: c.ropeDim}.Dispatch()
			ref, got := kitRun(t, d, [][]byte{qkv, kv(), kv(), kitF32(kitNaNs((c.m-1)*ldo + c.nHead*c.hd + 2)), freqs})
			worst = max(worst, kitCompare(t, ggml.BytesF32(ref[3]), ggml.BytesF32(got[3]), 2e-5, "rope_attention out"))
			require.Equal(t, qkv, got[0], "the qkv rows are only read")
			if ty == ggml.F32 {
				worst = max(worst, kitCompare(t, ggml.BytesF32(ref[1]), ggml.BytesF32(got[1]), 2e-6, "rope_attention k f32"))
			} else {
				// an f16 K may round the other way when the rotation differs
				// in the last float bit (as rope_kv's)
				worst = max(worst, kitCompare(t, kitAsF16(ref[1]), kitAsF16(got[1]), 1e-3, "rope_attention k f16"))
			}
			require.Equal(t, ref[2], got[2], "rope_attention v (a copy or a conversion)")
			for i := range d.Bind[:5] {
				d.Bind[i].Buf = plan.BufID(i)
			}
			ls, err := shaders.LaunchFor(&d, tune, nil)
			require.NoError(t, err)
			for _, l := range ls {
				require.True(t, strings.HasPrefix(l.Function, "rope_attention"), l.Function)
				used[l.Function] = true
			}
		}
	}
	if kitTune == nil && tune == &shaders.Default {
		for _, f := range []string{"rope_attention_f32", "rope_attention_f16", "rope_attention_merge"} {
			require.True(t, used[f], "no case ran %s", f)
		}
	}
	if tune.AttnTicket == shaders.TicketMerge && tune.AttnGroupKeys < 700 { // the splits merged by their last chunk
		require.True(t, used["rope_attention_ticket_f32"] && used["rope_attention_ticket_f16"], "no case ran rope_attention_ticket_*")
		require.False(t, used["rope_attention_merge"], "rope_attention_merge under AttnTicket")
	}
	if tune.Align16 == shaders.Aligned16 { // the aligned cases took the 16-byte loads
		require.True(t, used["rope_attention_f16_a16"], "no case ran rope_attention_f16_a16")
		if tune.AttnGroupKeys >= 90 {
			require.True(t, used["rope_attention_group_f16_a16"], "no case ran rope_attention_group_f16_a16")
		}
	}
	t.Logf("rope_attention: worst relative error %.3g; ran %v", worst, used)
}

package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// The contract's validations (plan.Dispatch.Check) are written once: the
// CPU backend, at load and again at a step that patches the rows, and the
// launch table refuse each bad record with the contract's own message.
func TestContractChecksShared(t *testing.T) {
	b := plan.Binding{} // every binding in buffer 0
	attn := plan.AttentionArgs{Type: ggml.F32, Q: b, K: b, V: b, Out: b, Probs: plan.None,
		HeadDim: 64, NHead: 2, NKV: 1, M: 1, Ldq: 128, Ldo: 128, KVLen: 10, Scale: 0.125, HeadStride: 64, PosStride: 64}
	rope := plan.RopeArgs{X: b, Freqs: b, HeadDim: 64, NHead: 2, M: 1, Ldx: 128, RopeDim: 64}
	ropeKV := plan.RopeKVArgs{Type: ggml.F32, QKV: b, Freqs: b, KCache: b, VCache: b,
		HeadDim: 64, NHead: 2, NKV: 1, M: 1, Ldqkv: 256, RopeDim: 64, HeadStride: 64, PosStride: 64}
	argmax := plan.ArgmaxArgs{X: b, Out: b, N: 100, M: 1, Ldx: 100}
	cases := map[string]struct {
		d     plan.Dispatch
		patch plan.PatchTarget // the rows field, patched at run time
		want  string
		rows  int64
	}{
		"attention grouping": {with(attn, func(a *plan.AttentionArgs) { a.NHead, a.NKV = 6, 4 }), plan.PatchAttentionM,
			"attention: 6 query heads cannot share 4 KV heads (head size 64)", 1},
		"attention no KV heads": {with(attn, func(a *plan.AttentionArgs) { a.NKV = 0 }), plan.PatchAttentionM,
			"attention: 2 query heads cannot share 0 KV heads (head size 64)", 1},
		"attention head size 0": {with(attn, func(a *plan.AttentionArgs) { a.HeadDim = 0 }), plan.PatchAttentionM,
			"attention: 2 query heads cannot share 1 KV heads (head size 0)", 1},
		"attention strides": {with(attn, func(a *plan.AttentionArgs) { a.M, a.Ldq = 2, 100 }), plan.PatchAttentionM,
			"attention: row strides (100, 128) smaller than 2 heads of 64", 2},
		"attention probs stride": {with(attn, func(a *plan.AttentionArgs) { a.Probs, a.Ldp = b, 9 }), plan.PatchAttentionM,
			"attention: probs row stride 9 smaller than kvLen 10", 1},
		"rope head size 0": {with(rope, func(a *plan.RopeArgs) { a.HeadDim, a.RopeDim = 0, 0 }), plan.PatchRopeM,
			"rope: head size 0", 1},
		"rope odd dims": {with(rope, func(a *plan.RopeArgs) { a.RopeDim = 63 }), plan.PatchRopeM,
			"rope: rope dims 63 must be even and at most the head size 64", 1},
		"rope dims past the head": {with(rope, func(a *plan.RopeArgs) { a.RopeDim = 66 }), plan.PatchRopeM,
			"rope: rope dims 66 must be even and at most the head size 64", 1},
		"rope odd head": {with(rope, func(a *plan.RopeArgs) { a.HeadDim, a.RopeDim, a.Ldx = 63, 0, 126 }), plan.PatchRopeM,
			"rope: rope dims 63 must be even and at most the head size 63", 1},
		"rope mode": {with(rope, func(a *plan.RopeArgs) { a.Mode = 1 }), plan.PatchRopeM,
			"rope: unknown rope mode 1", 1},
		"rope stride": {with(rope, func(a *plan.RopeArgs) { a.M, a.Ldx = 2, 100 }), plan.PatchRopeM,
			"rope: row stride 100 smaller than 2 heads of 64", 2},
		"rope_kv mode": {with(ropeKV, func(a *plan.RopeKVArgs) { a.Mode = 3 }), plan.PatchRopeKVM,
			"rope_kv: unknown rope mode 3", 1},
		"rope_kv dims": {with(ropeKV, func(a *plan.RopeKVArgs) { a.RopeDim = 65 }), plan.PatchRopeKVM,
			"rope_kv: rope dims 65 must be even and at most the head size 64", 1},
		"rope_kv stride": {with(ropeKV, func(a *plan.RopeKVArgs) { a.M, a.Ldqkv = 2, 200 }), plan.PatchRopeKVM,
			"rope_kv: row stride 200 smaller than 4 heads of 64", 2},
		"argmax empty rows": {with(argmax, func(a *plan.ArgmaxArgs) { a.N, a.Ldx = 0, 0 }), plan.PatchArgmaxM,
			"argmax: empty rows (n 0)", 1},
		"argmax stride": {with(argmax, func(a *plan.ArgmaxArgs) { a.M, a.Ldx = 2, 99 }), plan.PatchArgmaxM,
			"argmax: row stride 99 smaller than n 100", 2},
	}
	be := cpu.New(cpu.Options{Threads: 1})
	defer be.Close()
	for name, c := range cases {
		require.EqualError(t, c.d.Check(), c.want, name)
		_, err := LaunchFor(&c.d, &Default, nil)
		require.EqualError(t, err, "shaders: "+c.want, name)

		// at load: no patch, so the values are final
		p := checkPlan(c.d)
		_, err = be.Load(p)
		require.ErrorContains(t, err, "): "+c.want, name)

		// at run: the rows come from a variable
		c.d.AddPatch(c.patch, plan.VarNTok, 1, 0)
		ex, err := be.Load(checkPlan(c.d))
		require.NoError(t, err, name)
		require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarNTok: c.rows}), "): "+c.want, name)
		require.NoError(t, ex.Close())
	}
}

func with[A interface{ Dispatch() plan.Dispatch }](a A, f func(*A)) plan.Dispatch {
	f(&a)
	return a.Dispatch()
}

func checkPlan(d plan.Dispatch) *plan.Plan {
	p := &plan.Plan{Name: "check"}
	p.AddBuffer(plan.Buffer{Name: "buf", Kind: plan.Scratch, Size: 1 << 16})
	ps, _ := p.AddPass("step")
	ps.Add(d)
	return p
}

package metal

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// toyPlan is a decode-like pass over a 4 MiB "mapped" weight matrix:
// embed, Q/K/V projections into disjoint columns of one row, attention,
// output projection with residual, argmax writing the next token.
type toy struct {
	p                      *plan.Plan
	w, emb, norm           plan.BufID
	tokens, x, qkv, att, k plan.BufID
	logits                 plan.BufID
}

func toyPlan(t *testing.T) *toy {
	const n, k = 256, 256
	mapped := pageAligned(t, 4<<20, 16384)
	for i := range mapped {
		mapped[i] = byte(i)
	}
	ty := &toy{p: &plan.Plan{Name: "toy"}}
	p := ty.p
	ty.w = p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 3 * n * k * 4, Data: mapped[320000 : 320000+3*n*k*4]})
	ty.emb = p.AddBuffer(plan.Buffer{Name: "emb", Kind: plan.BufWeights, Size: 300 * k * 4, Data: mapped[64 : 64+300*k*4]})
	ty.norm = p.AddBuffer(plan.Buffer{Name: "norm", Kind: plan.BufWeights, Size: k * 4, Data: make([]byte, k*4)})
	ty.tokens = p.AddBuffer(plan.Buffer{Name: "tokens", Kind: plan.IO, Size: 4 * 150})
	ty.x = p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.Scratch, Size: 4 * k})
	ty.qkv = p.AddBuffer(plan.Buffer{Name: "qkv", Kind: plan.Scratch, Size: 4 * 3 * n})
	ty.att = p.AddBuffer(plan.Buffer{Name: "att", Kind: plan.Scratch, Size: 4 * n})
	ty.k = p.AddBuffer(plan.Buffer{Name: "kcache", Kind: plan.State, Size: 4 * 200 * n})
	ty.logits = p.AddBuffer(plan.Buffer{Name: "logits", Kind: plan.IO, Size: 4 * 100})
	ps, _ := p.AddPass("decode")

	d := plan.EmbedArgs{Add: plan.None, Type: ggml.F32, Table: plan.Binding{Buf: ty.emb}, Ids: plan.F32At(ty.tokens, 0), Out: plan.F32At(ty.x, 0),
		Dim: k, N: 1, Ldo: k}.Dispatch()
	d.AddPatch(plan.PatchEmbedIdsOff, plan.VarPos, 4, 0)
	ps.Add(d)
	for i := range 3 {
		ps.Add(plan.RMSNormMatVecArgs{Type: ggml.F32, W: plan.Binding{Buf: ty.w, Off: uint64(i * n * k * 4)}, X: plan.F32At(ty.x, 0),
			Out: plan.F32At(ty.qkv, i*n), Bias: plan.None, Res: plan.None, G: plan.Binding{Buf: ty.norm},
			N: n, K: k, M: 1, Ldx: k, Ldo: 3 * n, Eps: 1e-5}.Dispatch())
	}
	at := plan.AttentionArgs{Type: ggml.F32, Q: plan.F32At(ty.qkv, 0), K: plan.F32At(ty.k, 0), V: plan.F32At(ty.k, 0),
		Out: plan.F32At(ty.att, 0), Probs: plan.None, HeadDim: n, NHead: 1, NKV: 1, M: 1, Ldq: 3 * n, Ldo: n,
		Flags: plan.FlagCausal, Scale: 0.125, HeadStride: 64 * n, PosStride: n}.Dispatch()
	at.AddPatch(plan.PatchAttentionKVLen, plan.VarKVLen, 1, 0)
	ps.Add(at)
	ps.Add(plan.MatVecArgs{Type: ggml.F32, W: plan.Binding{Buf: ty.w}, X: plan.F32At(ty.att, 0), Out: plan.F32At(ty.x, 0),
		Bias: plan.None, Res: plan.F32At(ty.x, 0), N: n, K: k, M: 1, Ldx: n, Ldo: k, Ldr: k}.Dispatch())
	am := plan.ArgmaxArgs{X: plan.F32At(ty.logits, 0), Out: plan.F32At(ty.tokens, 0), N: 100, M: 1, Ldx: 100}.Dispatch()
	am.AddPatch(plan.PatchArgmaxOutOff, plan.VarKVLen, 4, 0)
	ps.Add(am)
	require.NoError(t, p.Validate())
	return ty
}

func loadToy(t *testing.T) (*toy, *Exec, *fakeDevice) {
	ty := toyPlan(t)
	b, dev := newTestBackend()
	x, err := b.Load(ty.p)
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	return ty, x.(*Exec), dev
}

// boundAt replays recorded commands and returns the bindings (indices
// 0..10) in force at each dispatch.
func boundAt(c []cmd) [][shaders.ScratchIndex + 1]devBind {
	var cur [shaders.ScratchIndex + 1]devBind
	var out [][shaders.ScratchIndex + 1]devBind
	for _, x := range c {
		switch x.op {
		case "buf":
			cur[x.index] = devBind{h: x.h, base: x.off}
		case "off":
			cur[x.index].base = x.off
		case "dispatch":
			out = append(out, cur)
		}
	}
	return out
}

// callsPerDispatch counts encoder messages before each dispatch (a
// setBuffers message recorded as several "buf" entries counts once).
func callsPerDispatch(c []cmd) []int {
	var out []int
	n := 0
	for i, x := range c {
		if x.op == "buf" && x.bulk && i > 0 && c[i-1].op == "buf" && c[i-1].bulk && c[i-1].index == x.index-1 {
			continue
		}
		n++
		if x.op == "dispatch" {
			out = append(out, n)
			n = 0
		}
	}
	return out
}

func ops(c []cmd) string {
	var s []string
	for _, x := range c {
		s = append(s, x.op)
	}
	return strings.Join(s, " ")
}

func TestEncodeOneStep(t *testing.T) {
	ty, e, dev := loadToy(t)
	require.Equal(t, 9, len(e.owned), "one wrapped region, small weights, dummy and 6 plan buffers")
	vars := plan.Vars{plan.VarPos: 5, plan.VarKVLen: 6}
	require.NoError(t, e.Run(0, &vars))
	require.Equal(t, 1, len(dev.cbs))
	c := dev.cbs[0].cmds

	// Embed; the three projections run side by side (disjoint columns of
	// qkv, all reading x); attention waits for them; its second launch
	// waits for its first; the output projection waits for attention;
	// argmax reads logits, which nothing here wrote, but its scratch
	// follows attention's in the arena, so no barrier is needed there.
	var dispatches, barriers []int
	for i, x := range c {
		switch x.op {
		case "dispatch":
			dispatches = append(dispatches, i)
		case "barrier":
			barriers = append(barriers, i)
		}
	}
	require.Equal(t, 9, len(dispatches), ops(c))
	between := func(a, b int) int {
		n := 0
		for _, i := range barriers {
			if i > dispatches[a] && i < dispatches[b] {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, between(0, 1), "Q reads x written by embed")
	require.Equal(t, 0, between(1, 2), "Q and K write disjoint columns")
	require.Equal(t, 0, between(2, 3), "K and V write disjoint columns")
	require.Equal(t, 1, between(3, 4), "attention reads qkv")
	require.Equal(t, 1, between(4, 5), "merge launch after the split launch")
	require.Equal(t, 1, between(5, 6), "output projection reads att")
	require.Equal(t, 0, between(6, 7), "argmax touches nothing the projection did")
	require.Equal(t, 1, between(7, 8), "argmax merge after its first launch")
	st := e.Stats()
	require.Equal(t, backends.MetalStats{CommandBuffers: 1, Steps: 1, Dispatches: 7, Launches: 9, Barriers: 5, GPUSeconds: st.GPUSeconds}, st)
	require.InDelta(t, 0.001, st.GPUSeconds, 1e-9, "GPUEndTime-GPUStartTime of the fake")
	require.Equal(t, st, e.backend.Stats(), "the backend sums its executables")

	// Bindings as each dispatch sees them: the embed table at its offset in
	// the wrapped region, the token id at pos*4; Q/K/V bind the weights
	// region at their matrices' offsets; Q, K and V each change only their
	// weights and output offsets, so they send one setBuffers message or
	// none beyond the offset moves.
	at := boundAt(c)
	reg := e.binds[ty.w].h
	require.Equal(t, reg, at[0][0].h, "emb and w share the wrapped region")
	require.Equal(t, uint64(64), at[0][0].base, "emb starts 64 bytes into the region")
	require.Equal(t, uint64(20), at[0][1].base, "embedding reads tokens[pos]")
	for i := range 3 {
		require.Equal(t, devBind{h: reg, base: uint64(320000 + i*256*256*4)}, at[1+i][0])
		require.Equal(t, devBind{h: e.binds[ty.qkv].h, base: uint64(i * 256 * 4)}, at[1+i][2])
		require.Equal(t, e.dummy.h, at[1+i][3].h, "no bias")
	}
	require.Equal(t, e.dummy.h, at[4][4].h, "attention's absent probs binding is the dummy buffer")
	require.Equal(t, uint64(6*4), at[8][1].base, "argmax writes tokens[kvLen]")
	// K's and V's bindings differ from the previous op's in slots 0 and 2
	// only: two messages each (setBuffers over [0, 2], or offsets).
	perOp := callsPerDispatch(c)
	require.LessOrEqual(t, perOp[2], 2+1+1, "bindings, Args, dispatch")

	tokensAt := func(index int) []uint64 {
		var o []uint64
		for _, x := range c {
			if (x.op == "buf" || x.op == "off") && x.index == index {
				o = append(o, x.off)
			}
		}
		return o
	}

	// Args: the resolved params, the bind mask and the grid.
	var args [][shaders.ArgsSize]byte
	for _, x := range c {
		if x.op == "bytes" {
			require.Equal(t, shaders.ArgsIndex, x.index)
			args = append(args, x.args)
		}
	}
	require.Equal(t, 7, len(args), "one Args block per dispatch")
	aa := args[4]
	require.Equal(t, uint32(6), binary.LittleEndian.Uint32(aa[6*4:]), "kvLen patched")
	require.Equal(t, uint32(0b01111), binary.LittleEndian.Uint32(aa[64:]), "probs absent")
	// The absent probs binding is the dummy buffer.
	found := false
	for _, x := range c {
		if x.op == "buf" && x.index == 4 && x.h == e.dummy.h {
			found = true
		}
	}
	require.True(t, found)
	// Attention and argmax get per-dispatch scratch at index 10, in
	// different places of the arena, and dynamic threadgroup memory
	// rounded up to 16 bytes.
	require.Equal(t, []uint64{0, 4096}, tokensAt(shaders.ScratchIndex))
	for _, x := range c {
		if x.op == "tgmem" {
			require.Equal(t, uint64(1008), x.off)
		}
	}
}

func TestChainedSteps(t *testing.T) {
	_, e, dev := loadToy(t)
	steps := make([]Step, 130)
	for i := range steps {
		steps[i] = Step{Vars: plan.Vars{plan.VarPos: int64(i), plan.VarKVLen: int64(i + 1)}}
	}
	n, err := e.RunSteps(steps, 64, nil)
	require.NoError(t, err)
	require.Equal(t, 130, n)
	require.Equal(t, []string{"commit 1", "commit 2", "wait 1", "commit 3", "wait 2", "wait 3"}, dev.log,
		"chunk N+1 is committed before the CPU waits for chunk N")
	require.Equal(t, 3, len(dev.cbs))
	for _, cb := range dev.cbs {
		require.True(t, cb.released, "command buffers are released after their wait")
	}
	// Every chunk starts with fresh binding state; step boundaries inside a
	// chunk need barriers only where data flows: the next embedding reads
	// the token the previous argmax wrote.
	first := dev.cbs[0].cmds
	require.Equal(t, "buf", first[0].op, "no binding carried over from another encoder")
	require.Equal(t, 64*9, strings.Count(ops(first), "dispatch"))

	// Stopping after the first chunk: the second is already committed and
	// completes, the third is never encoded.
	dev.log = nil
	var calls []int
	n, err = e.RunSteps(steps, 64, func(done int) bool { calls = append(calls, done); return false })
	require.NoError(t, err)
	require.Equal(t, 64, n)
	require.Equal(t, []int{64}, calls)
	require.Equal(t, []string{"commit 4", "commit 5", "wait 4", "wait 5"}, dev.log)

	// RunSeq chains with the family's chain length (apple8: 64).
	dev.log = nil
	vars := make([]plan.Vars, 100)
	for i := range vars {
		vars[i] = plan.Vars{plan.VarPos: int64(i), plan.VarKVLen: int64(i + 1)}
	}
	require.NoError(t, e.RunSeq(0, vars))
	require.Equal(t, []string{"commit 6", "commit 7", "wait 6", "wait 7"}, dev.log)
}

func TestChainErrors(t *testing.T) {
	_, e, dev := loadToy(t)
	steps := make([]Step, 200)
	for i := range steps {
		steps[i] = Step{Vars: plan.Vars{plan.VarPos: int64(i), plan.VarKVLen: int64(i + 1)}}
	}
	// Step 149's argmax overruns the token buffer (150 ids): its chunk is
	// dropped unsent, the chunks before it complete.
	n, err := e.RunSteps(steps, 64, nil)
	require.ErrorContains(t, err, `toy/decode op 6 (argmax)`)
	require.ErrorContains(t, err, `buffer "tokens"`)
	require.Equal(t, 128, n)
	require.Equal(t, []string{"commit 1", "commit 2", "wait 1", "abort", "wait 2"}, dev.log)

	// A failed command buffer carries Metal's message and stops the chain.
	dev.log = nil
	dev.failCB = 5 // the second of this chain (the third was aborted)
	n, err = e.RunSteps(steps[:40], 10, nil)
	require.ErrorContains(t, err, "kIOGPUCommandBufferCallbackErrorTimeout")
	require.Equal(t, 10, n)
	require.Equal(t, []string{"commit 3", "commit 4", "wait 3", "commit 5", "wait 4", "wait 5"}, dev.log)

	// Negative patched values, bad pass numbers, closed executables.
	dev.failCB = 0
	_, err = e.RunSteps([]Step{{Vars: plan.Vars{plan.VarPos: -1}}}, 1, nil)
	require.ErrorContains(t, err, "gives -4")
	require.ErrorContains(t, e.Run(3, nil), "pass 3 out of range")
	require.NoError(t, e.Close())
	require.ErrorContains(t, e.Run(0, nil), "closed")
	require.Equal(t, 0, dev.leaked(), "every buffer released at Close")
}

func TestLaunchErrors(t *testing.T) {
	ty := toyPlan(t)
	b, _ := newTestBackend()

	// A kernel without MSL fails at load, naming the first use.
	b.missing = func() []plan.Kernel { return []plan.Kernel{plan.Attention} }
	_, err := b.Load(ty.p)
	require.EqualError(t, err, "metal: plan toy/decode op 4: kernel attention has no MSL implementation yet")

	// LaunchFor's errors and the pipeline's limits surface with the op.
	b.missing = func() []plan.Kernel { return nil }
	b.launch = func(d *plan.Dispatch, tu *shaders.Tuning, dst []shaders.Launch) ([]shaders.Launch, error) {
		switch d.Kernel {
		case plan.Attention:
			if plan.DecodeAttention(d).KVLen > 10 {
				return dst, errors.New("shaders: attention: kvLen too long for this test")
			}
		case plan.Argmax:
			return append(dst, shaders.Launch{Function: "heavy", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{512, 1, 1}}), nil
		case plan.MatVec:
			if d.Grid[2] == 7 {
				return append(dst, shaders.Launch{Function: "tiles", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{32, 1, 1}, Threadgroup: 40000}), nil
			}
		}
		return testLaunch(d, tu, dst)
	}
	x, err := b.Load(ty.p)
	require.NoError(t, err)
	defer x.Close()
	err = x.Run(0, &plan.Vars{plan.VarPos: 20, plan.VarKVLen: 21})
	require.EqualError(t, err, "metal: toy/decode op 4 (attention): shaders: attention: kvLen too long for this test")
	err = x.Run(0, &plan.Vars{plan.VarPos: 2, plan.VarKVLen: 3})
	require.EqualError(t, err, "metal: toy/decode op 6 (argmax): heavy: 512 threads per threadgroup, the pipeline allows 256")
	ty.p.Passes[0].Ops[5].Grid[2] = 7 // the stand-in launch rule asks for too much threadgroup memory
	x2, err := b.Load(ty.p)
	require.NoError(t, err)
	defer x2.Close()
	err = x2.Run(0, &plan.Vars{plan.VarPos: 2, plan.VarKVLen: 3})
	require.EqualError(t, err, "metal: toy/decode op 5 (mat_vec): tiles: 40000 bytes of threadgroup memory, the device has 32768")

	// A pipeline that fails to compile fails the load (prewarm).
	b.launch = func(d *plan.Dispatch, tu *shaders.Tuning, dst []shaders.Launch) ([]shaders.Launch, error) {
		return append(dst, shaders.Launch{Function: "bad_function", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{32, 1, 1}}), nil
	}
	_, err = b.Load(ty.p)
	require.ErrorContains(t, err, "function bad_function not found in the library")
}

func TestReadWrite(t *testing.T) {
	ty, e, _ := loadToy(t)
	require.NoError(t, e.Write(ty.tokens, 8, []byte{1, 2, 3, 4}))
	got := make([]byte, 4)
	require.NoError(t, e.Read(ty.tokens, 8, got))
	require.Equal(t, []byte{1, 2, 3, 4}, got)
	require.NoError(t, e.Write(ty.k, 0, make([]byte, 16)), "State is shared")
	require.ErrorContains(t, e.Read(ty.x, 0, got), `"x" is scratch in GPU-private memory`)
	require.ErrorContains(t, e.Write(ty.w, 0, got), "read-only")
	require.ErrorContains(t, e.Read(ty.tokens, 598, got), "outside buffer")
	require.ErrorContains(t, e.Read(99, 0, got), "unknown buffer")
	// Small weights are copied into the device's buffer.
	sb := e.binds[ty.norm]
	require.NotEqual(t, e.binds[ty.w].h, sb.h)
}

func TestLoadRejects(t *testing.T) {
	b, _ := newTestBackend()
	_, err := b.Load(nil)
	require.Error(t, err)
	ty := toyPlan(t)
	ty.p.Buffers[ty.x].Size = 100 << 30
	_, err = b.Load(ty.p)
	require.ErrorContains(t, err, "too large")
	ty = toyPlan(t)
	ty.p.Buffers[ty.x].Data = []byte{1}
	_, err = b.Load(ty.p)
	require.ErrorContains(t, err, "has Data")
	ty = toyPlan(t)
	ty.p.Passes[0].Ops[1].Bind[1].Off = 1 << 40
	_, err = b.Load(ty.p)
	require.ErrorContains(t, err, "beyond buffer")
}

// A dispatch whose function constants depend on the step gets the pipeline
// of its constants each time (the per-op memo must not return a stale
// one), and each pipeline is compiled once.
func TestPipelinePerConstants(t *testing.T) {
	ty := toyPlan(t)
	b, dev := newTestBackend()
	b.launch = func(d *plan.Dispatch, tu *shaders.Tuning, dst []shaders.Launch) ([]shaders.Launch, error) {
		l := shaders.Launch{Function: "attention_f32", Groups: [3]uint32{1, 1, 1}, Threads: [3]uint32{32, 1, 1}}
		if d.Kernel == plan.Attention && plan.DecodeAttention(d).KVLen > 8 {
			l.Constants = []shaders.Constant{{Index: 0, Value: 2}}
		}
		return append(dst, l), nil
	}
	x, err := b.Load(ty.p)
	require.NoError(t, err)
	defer x.Close()
	require.Equal(t, 1, dev.compiles, "prewarm: every op resolves to attention_f32 without constants")
	pipeOf := func() handle {
		c := dev.cbs[len(dev.cbs)-1].cmds
		var last handle
		n := 0
		for _, x := range c {
			if x.op == "pipe" {
				last = x.h
			}
			if x.op == "dispatch" {
				n++
				if n == 5 { // attention
					return last
				}
			}
		}
		return 0
	}
	require.NoError(t, x.Run(0, &plan.Vars{plan.VarPos: 2, plan.VarKVLen: 3}))
	short := pipeOf()
	require.NoError(t, x.Run(0, &plan.Vars{plan.VarPos: 20, plan.VarKVLen: 21}))
	long := pipeOf()
	require.NotEqual(t, short, long)
	require.NoError(t, x.Run(0, &plan.Vars{plan.VarPos: 2, plan.VarKVLen: 3}))
	require.Equal(t, short, pipeOf())
	require.Equal(t, 2, dev.compiles)
}

func TestRunPasses(t *testing.T) {
	_, e, dev := loadToy(t)
	var chain interface {
		RunPasses([]int, []plan.Vars, int, func(int) bool) (int, error)
	} = e
	vars := []plan.Vars{{plan.VarPos: 0, plan.VarKVLen: 1}, {plan.VarPos: 1, plan.VarKVLen: 2}, {plan.VarPos: 2, plan.VarKVLen: 3}}
	n, err := chain.RunPasses([]int{0, 0, 0}, vars, 2, nil)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []string{"commit 1", "commit 2", "wait 1", "wait 2"}, dev.log)
	_, err = chain.RunPasses([]int{0}, vars, 2, nil)
	require.ErrorContains(t, err, "1 passes for 3 step variables")
}

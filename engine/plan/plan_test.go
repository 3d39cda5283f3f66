package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolvedAppliesPatches(t *testing.T) {
	d := Dispatch{Kernel: RopeKV, NBind: 4, NPatch: 2}
	d.P[5] = 7
	d.Patch[0] = Patch{Target: PatchParam0 + 5, Var: VarPos, Mul: 1}
	d.Patch[1] = Patch{Target: PatchOffset0 + 2, Var: VarPos, Mul: 128, Base: 4096}
	vars := Vars{VarPos: 9}
	r := d.Resolved(&vars)
	require.Equal(t, uint32(9), r.P[5])
	require.Equal(t, uint64(4096+9*128), r.Bind[2].Off)
	require.Equal(t, uint32(7), d.P[5], "the plan itself is not modified")
}

func TestValidate(t *testing.T) {
	var p Plan
	b := p.AddBuffer(Buffer{Name: "x", Kind: Scratch, Size: 64})
	ps, _ := p.AddPass("step")
	ps.Add(Dispatch{Kernel: Scale, NBind: 2, Bind: [MaxBind]Binding{{Buf: b}, {Buf: b, Off: 32}}})
	require.NoError(t, p.Validate())
	ps.Add(Dispatch{Kernel: Scale, NBind: 2, Bind: [MaxBind]Binding{{Buf: b}, {Buf: 5}}})
	require.ErrorContains(t, p.Validate(), "names buffer 5")
	ps.Ops = ps.Ops[:1]
	ps.Add(Dispatch{Kernel: Scale, NBind: 1})
	require.ErrorContains(t, p.Validate(), "want at least 2")
}

func TestEveryKernelHasInfo(t *testing.T) {
	for _, k := range Kernels() {
		_, ok := k.Info()
		require.True(t, ok, "kernel %d", k)
	}
}

func TestUniform(t *testing.T) {
	seen := map[float32]bool{}
	for s := uint64(0); s < 1000; s++ {
		u := Uniform(42, s)
		require.GreaterOrEqual(t, u, float32(0))
		require.Less(t, u, float32(1))
		seen[u] = true
	}
	require.Greater(t, len(seen), 990)
	require.Equal(t, Uniform(1, 2), Uniform(1, 2))
}

func TestBuildHelpers(t *testing.T) {
	var p Plan
	w := NewWeights(&p)
	a := w.Bind("w", make([]byte, 8))
	require.Equal(t, a, w.Bind("w", make([]byte, 8)), "declared once")
	require.Len(t, p.Buffers, 1)
	require.Equal(t, BufWeights, p.Buffers[0].Kind)
	bs, n := Binds(a, F32At(3, 5), None)
	require.Equal(t, uint8(3), n)
	require.Equal(t, Binding{Buf: 3, Off: 20}, bs[1])
	require.Equal(t, NoBuf, bs[2].Buf)
	var d Dispatch
	d.AddPatch(PatchParam0+2, VarNTok, 1, 0)
	d.AddPatch(PatchOffset0, VarPos, 16, 4)
	r := d.Resolved(&Vars{VarNTok: 7, VarPos: 2})
	require.Equal(t, uint32(7), r.P[2])
	require.Equal(t, uint64(36), r.Bind[0].Off)
}

// memExec is an Executable over host memory, for the typed helpers.
type memExec struct{ b []byte }

func (m *memExec) Run(int, *Vars) error     { return nil }
func (m *memExec) RunSeq(int, []Vars) error { return nil }
func (m *memExec) Close() error             { return nil }
func (m *memExec) Write(_ BufID, off int64, src []byte) error {
	copy(m.b[off:], src)
	return nil
}
func (m *memExec) Read(_ BufID, off int64, dst []byte) error {
	copy(dst, m.b[off:])
	return nil
}

func TestTypedHostAccess(t *testing.T) {
	x := &memExec{b: make([]byte, 32)}
	require.NoError(t, WriteF32(x, 0, 1, []float32{1.5, -2}))
	require.Equal(t, []byte{0, 0, 0xc0, 0x3f}, x.b[4:8], "little-endian float bits")
	require.NoError(t, WriteI32(x, 0, 4, []int32{-1, 7}))
	f := make([]float32, 2)
	require.NoError(t, ReadF32(x, 0, 1, f))
	require.Equal(t, []float32{1.5, -2}, f)
	i := make([]int32, 2)
	require.NoError(t, ReadI32(x, 0, 4, i))
	require.Equal(t, []int32{-1, 7}, i)
	require.Zero(t, testing.AllocsPerRun(10, func() { _ = ReadI32(x, 0, 4, i) }))
}

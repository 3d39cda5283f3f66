package cuda

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/plan"
)

// effective is what a kernel sees of a replayed launch's parameter: the
// step's variables read from the fake's memory and the patches applied,
// as __hark::patch in msl_cuda.h does.
func (f *fakeGPU) effective(p params) params {
	if p.step == 0 {
		return p
	}
	b, o := f.find(p.step)
	var vars plan.Vars
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&vars)), unsafe.Sizeof(vars)), b[o:])
	for _, q := range p.patch[:p.npatch] {
		v := q.base + q.mul*vars[q.vr]
		if q.target < uint32(plan.PatchOffset0) {
			p.args[q.target] = uint32(v)
		} else {
			p.bufs[q.target-uint32(plan.PatchOffset0)] += uint64(v)
		}
	}
	p.step, p.npatch, p.patch = 0, 0, [plan.MaxPatch]devPatch{}
	return p
}

// patchedPlan is one scale dispatch whose rows come from VarNTok and
// whose output row from VarPos: both patched, and its grid follows the
// rows.
func patchedPlan() (*plan.Plan, plan.BufID) {
	p := &plan.Plan{Name: "patched"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 16 * 64 * 4})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 16 * 64 * 4})
	ps, _ := p.AddPass("main")
	d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: x}, plan.Binding{Buf: y})
	d.P[0], d.P[1], d.P[2], d.P[3] = 64, 1, 64, 64 // rows of 64 floats
	d.Patch[0] = plan.Patch{Target: plan.PatchParam0 + 1, Var: plan.VarNTok, Mul: 1}
	d.Patch[1] = plan.Patch{Target: plan.PatchOffset0 + 1, Var: plan.VarPos, Mul: 64 * 4}
	d.NPatch = 2
	ps.Add(d)
	return p, y
}

// loadPatched opens a backend with o on the fake and loads patchedPlan;
// both close with the test.
func loadPatched(t *testing.T, o Options) (*Backend, plan.Executable) {
	t.Helper()
	b, err := New(o)
	require.NoError(t, err)
	t.Cleanup(b.Close)
	p, _ := patchedPlan()
	ex, err := b.Load(p)
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return b, ex
}

// norm replaces the buffer addresses of a parameter by (buffer, offset),
// so launches of two executables of one plan compare.
func norm(e *Exec, p params) params {
	for i, a := range p.bufs {
		for bi, base := range e.ptrs {
			if a >= base && a < base+e.sizes[bi] {
				p.bufs[i] = uint64(bi)<<48 | (a - base)
				break
			}
		}
		if a == e.dummy {
			p.bufs[i] = 1 << 63
		}
		if a == e.tickets {
			p.bufs[i] = 1 << 62
		}
	}
	return p
}

// A pass replayed from a recorded graph: the first use of a shape is
// launched kernel by kernel, the second too while the graph is recorded
// on the capture stream (nothing recorded runs), later ones replay it
// with one launch and only the step variables copied; what the kernels
// see equals the kernel-by-kernel launch of the same step; a new grid
// (more rows) is a new graph.
func TestFakeGraphReplay(t *testing.T) {
	f := withFake(t, 90)
	_, ex := loadPatched(t, Options{})
	_, rex := loadPatched(t, Options{NoGraphs: true})
	e, re := ex.(*Exec), rex.(*Exec)

	check := func(vars plan.Vars, replayed bool) {
		t.Helper()
		require.NoError(t, rex.Run(0, &vars))
		want := f.launches[len(f.launches)-1]
		require.False(t, want.replayed)
		require.NoError(t, ex.Run(0, &vars))
		got := f.launches[len(f.launches)-1]
		require.Equal(t, replayed, got.replayed, "vars %v", vars)
		require.Equal(t, want.grid, got.grid)
		require.Equal(t, want.block, got.block)
		require.Equal(t, norm(re, want.prm), norm(e, f.effective(got.prm)), "vars %v", vars)
	}
	check(plan.Vars{plan.VarPos: 0, plan.VarNTok: 1}, false) // first sight: launched
	n := len(f.launches)
	check(plan.Vars{plan.VarPos: 1, plan.VarNTok: 1}, false) // second: launched, and recorded
	require.Len(t, f.launches, n+2, "the recorded launch did not run")
	for pos := int64(2); pos < 6; pos++ {
		check(plan.Vars{plan.VarPos: pos, plan.VarNTok: 1}, true)
	}
	st := e.Stats()
	require.Equal(t, backends.CUDAStats{Steps: 6, KernelLaunches: 2, GraphLaunches: 4, GraphsBuilt: 1, Recorded: 1, Syncs: st.Syncs}, st)
	require.Equal(t, 1, f.count_("cuStreamBeginCapture"))
	require.Equal(t, e.b.dev.capture, f.capStream, "recorded on the capture stream")
	require.NotEqual(t, e.b.dev.stream, f.capStream)

	// more rows: another grid, another graph
	check(plan.Vars{plan.VarPos: 2, plan.VarNTok: 9}, false)
	check(plan.Vars{plan.VarPos: 3, plan.VarNTok: 9}, false)
	check(plan.Vars{plan.VarPos: 4, plan.VarNTok: 9}, true)
	check(plan.Vars{plan.VarPos: 0, plan.VarNTok: 1}, true) // the first graph is still there
	require.Equal(t, 2, e.Stats().GraphsBuilt)

	// a patch out of range is refused before anything is issued
	n = len(f.launches)
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarPos: -1, plan.VarNTok: 1}), "cuda: plan patched/main op 0")
	require.Len(t, f.launches, n)
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarPos: 64, plan.VarNTok: 1}), "past buffer \"y\"")
	require.Len(t, f.launches, n)
}

// A chain of steps: chunk steps per batch, one graph launch per batch once
// the batch's shape repeats; done sees every batch and can stop the
// chain, after which nothing more is issued.
func TestFakeChain(t *testing.T) {
	f := withFake(t, 90)
	b, ex := loadPatched(t, Options{})
	ch, ok := ex.(plan.Chainer)
	require.True(t, ok, "the CUDA executable chains")
	e := ex.(*Exec)

	steps := func(from, n int) ([]int, []plan.Vars) {
		ps, vs := make([]int, n), make([]plan.Vars, n)
		for i := range vs {
			vs[i] = plan.Vars{plan.VarPos: int64((from + i) % 16), plan.VarNTok: 1} // y holds 16 rows
		}
		return ps, vs
	}
	ps, vs := steps(0, 6)
	var seen []int
	done, err := ch.RunPasses(ps, vs, 2, func(c int) bool { seen = append(seen, c); return true })
	require.NoError(t, err)
	require.Equal(t, 6, done)
	require.Equal(t, []int{2, 4, 6}, seen)
	st := e.Stats()
	// batch 1 launched, batch 2 launched and recorded, batch 3 replayed
	require.Equal(t, 4, st.KernelLaunches)
	require.Equal(t, 1, st.GraphLaunches)
	require.Equal(t, 1, st.GraphsBuilt)
	require.Len(t, f.launches, 6)
	require.True(t, f.launches[4].replayed && f.launches[5].replayed)
	for i, l := range f.launches {
		pos := uint64(i)
		require.Equal(t, e.ptrs[1]+pos*64*4, f.effective(l.prm).bufs[1], "launch %d writes row %d", i, pos)
	}

	// the default batch, 128 steps (64 tokens of decode and argmax), is
	// one host launch once recorded
	for from := 0; from < 3*128; from += 128 {
		ps, vs := steps(from, 128)
		_, err := ch.RunPasses(ps, vs, 0, nil)
		require.NoError(t, err)
	}
	b.ResetStats()
	ps, vs = steps(1, 128)
	_, err = ch.RunPasses(ps, vs, 0, nil)
	require.NoError(t, err)
	st = b.Stats()
	require.Equal(t, backends.CUDAStats{Steps: 128, GraphLaunches: 1, Syncs: 1}, st)
	require.Equal(t, 1, st.HostLaunches())

	// stopping: done says no after the first batch; the rest is not issued
	n := len(f.launches)
	ps, vs = steps(0, 6)
	done, err = ch.RunPasses(ps, vs, 2, func(int) bool { return false })
	require.NoError(t, err)
	require.Equal(t, 2, done)
	require.Len(t, f.launches, n+2)

	// a failing step: earlier batches count, the failing one is not issued
	vs[3][plan.VarPos] = -5
	n = len(f.launches)
	done, err = ch.RunPasses(ps, vs, 2, nil)
	require.ErrorContains(t, err, "step 3")
	require.Equal(t, 2, done)
	require.Len(t, f.launches, n+2)
}

// RunPassesIO (plan.IOChainer): the input is written before the first
// batch and, after every batch, done sees the read-back's bytes, both
// copied inside the batches' own waits, so those are the only waits; a
// span outside an IO buffer is refused before anything runs;
// Options.NoChain hides it with the Chainer.
func TestFakeChainIO(t *testing.T) {
	f := withFake(t, 90)
	b, ex := loadPatched(t, Options{})
	c, ok := ex.(plan.IOChainer)
	require.True(t, ok, "the CUDA executable moves a chain's input and read-backs")
	want := make([]byte, 64)
	for i := range want {
		want[i] = byte(3 * i)
	}
	require.NoError(t, ex.Write(1, 128, want))
	ps, vs := make([]int, 6), make([]plan.Vars, 6)
	for i := range vs {
		vs[i] = plan.Vars{plan.VarPos: int64(i), plan.VarNTok: 1}
	}
	src := []byte("the chain's input, written once")
	io := plan.ChainIO{In: 0, InOff: 40, Src: src, Out: 1, OutOff: 128, Dst: make([]byte, 64)}
	b.ResetStats()
	var seen []int
	n, err := c.RunPassesIO(ps, vs, 2, &io, func(done int) bool {
		require.Equal(t, want, io.Dst, "after %d steps", done)
		clear(io.Dst)
		seen = append(seen, done)
		return done < 4
	})
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Equal(t, []int{2, 4}, seen)
	require.Equal(t, 2, b.Stats().Syncs, "one wait a batch, the copies in it")
	require.Len(t, f.launches, 4)
	got := make([]byte, len(src))
	require.NoError(t, ex.Read(0, 40, got))
	require.Equal(t, src, got)

	for _, bad := range []plan.ChainIO{
		{In: 0, Out: 1, OutOff: 16*64*4 - 8, Dst: make([]byte, 64)},
		{In: 0, InOff: 16 * 64 * 4, Src: src, Out: 1},
		{In: 0, Out: 7, Dst: make([]byte, 4)},
	} {
		_, err = c.RunPassesIO(ps, vs, 2, &bad, nil)
		require.ErrorContains(t, err, "buffer")
	}
	require.Len(t, f.launches, 4, "nothing issued for a bad transfer")

	_, plain := loadPatched(t, Options{NoChain: true})
	_, ok = plain.(plan.IOChainer)
	require.False(t, ok, "NoChain hides the chain's transfers")
}

// A graph the driver refuses to instantiate is counted with the driver's
// error, the capture is ended, and that shape runs kernel by kernel from
// then on with the same results; Options.NoChain hides the Chainer;
// NoGraphs launches kernel by kernel.
func TestFakeGraphErrorsAndSwitches(t *testing.T) {
	f := withFake(t, 90)
	_, ex := loadPatched(t, Options{})
	v := plan.Vars{plan.VarNTok: 1}
	require.NoError(t, ex.Run(0, &v))
	f.fail["cuGraphInstantiateWithFlags"] = 999
	n := len(f.launches)
	require.NoError(t, ex.Run(0, &v))
	require.False(t, f.capturing)
	require.Len(t, f.launches, n+1, "launched kernel by kernel instead")
	require.False(t, f.launches[n].replayed)
	st := ex.(*Exec).Stats()
	require.Equal(t, 1, st.RecordFailures)
	require.Contains(t, st.RecordError, "cuGraphInstantiateWithFlags: CUDA_ERROR_FAKE (999)")
	delete(f.fail, "cuGraphInstantiateWithFlags")
	require.NoError(t, ex.Run(0, &v))
	require.Zero(t, ex.(*Exec).Stats().GraphsBuilt, "a shape that failed is not tried again")
	w := plan.Vars{plan.VarNTok: 2}
	require.NoError(t, ex.Run(0, &w))
	require.NoError(t, ex.Run(0, &w))
	require.Equal(t, 1, ex.(*Exec).Stats().GraphsBuilt)
	require.Empty(t, f.graphs, "graphs are dropped once instantiated")
	require.NoError(t, ex.Close())
	require.Empty(t, f.execs, "Close destroys the executable graphs")

	nb, nex := loadPatched(t, Options{NoChain: true, NoGraphs: true})
	_, chains := nex.(plan.Chainer)
	require.False(t, chains)
	nb.ResetStats()
	for range 3 {
		require.NoError(t, nex.Run(0, &v))
	}
	require.Equal(t, backends.CUDAStats{Steps: 3, KernelLaunches: 3, Syncs: 3}, nb.Stats())
}

// Profiling: every launch is bracketed by events (one pool, reused), each
// function gets the time between its events, graphs stay off, and the
// totals survive Close and go with ResetStats.
func TestFakeProfile(t *testing.T) {
	f := withFake(t, 90)
	b, ex := loadPatched(t, Options{Profile: true})
	v := plan.Vars{plan.VarNTok: 1}
	for range 3 {
		require.NoError(t, ex.Run(0, &v))
	}
	require.Equal(t, []backends.KernelTime{{Function: "scale", Launches: 3, Seconds: 3 * 0.25e-3}}, b.Profile())
	st := b.Stats()
	require.Equal(t, 3, st.KernelLaunches)
	require.Zero(t, st.GraphLaunches, "no graphs while profiling")
	require.Equal(t, 2, f.count_("cuEventCreate"), "a start and an end event, reused")
	require.Equal(t, 6, f.count_("cuEventRecord"))
	require.NoError(t, ex.Close())
	require.Equal(t, 2, f.count_("cuEventDestroy"))
	require.Len(t, b.Profile(), 1, "kept after Close")
	b.ResetStats()
	require.Empty(t, b.Profile())

	// off by default
	b2, ex2 := loadPatched(t, Options{})
	require.NoError(t, ex2.Run(0, &v))
	require.Empty(t, b2.Profile())
}

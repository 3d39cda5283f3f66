package msltest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// ewShapes include sizes that are not multiples of the threadgroup width
// (256) or the SIMD width, and strided rows.
var ewShapes = []struct{ n, m, ld int }{
	{1, 1, 1}, {7, 3, 9}, {32, 2, 32}, {255, 4, 260}, {257, 3, 257}, {1000, 2, 1003},
}

func ioBuf(name string, floats int) plan.Buffer {
	return plan.Buffer{Name: name, Kind: plan.IO, Size: int64(floats) * 4}
}

func TestElementwiseVsCPU(t *testing.T) {
	for _, s := range ewShapes {
		sz := s.ld*(s.m-1) + s.n
		ld := uint32(s.ld)
		n, m := uint32(s.n), uint32(s.m)
		// add, with a broadcast b and with out aliasing a
		for _, ldb := range []uint32{ld, 0} {
			d := plan.AddArgs{N: int(n), M: int(m), Lda: int(ld), Ldb: int(ldb), Ldo: int(ld)}.Dispatch()
			d.Bind[0], d.Bind[1], d.Bind[2] = plan.Binding{Buf: 0}, plan.Binding{Buf: 1}, plan.Binding{Buf: 2}
			Compare(t, Case{Plan: SingleOp(d, ioBuf("a", sz), ioBuf("b", sz), ioBuf("o", sz)), Outputs: []Output{F32(2)}, Seed: 1})
			d.Bind[2] = plan.Binding{Buf: 0}
			Compare(t, Case{Plan: SingleOp(d, ioBuf("a", sz), ioBuf("b", sz)), Outputs: []Output{F32(0)}, Seed: 2})
		}
		d := plan.ScaleArgs{N: int(n), M: int(m), Ldx: int(ld), Ldo: int(ld), Scale: -1.75}.Dispatch()
		d.Bind[1] = plan.Binding{Buf: 1}
		Compare(t, Case{Plan: SingleOp(d, ioBuf("x", sz), ioBuf("o", sz)), Outputs: []Output{F32(1)}, Seed: 3})

		for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
			d := plan.CopyArgs{Type: typ, N: int(n), M: int(m), Lds: int(ld), Ldd: int(ld)}.Dispatch()
			d.Bind[1] = plan.Binding{Buf: 1}
			Compare(t, Case{Plan: SingleOp(d, ioBuf("x", sz), ioBuf("o", sz)), Outputs: []Output{{Buf: 1, Type: typ}}, Seed: 4,
				Fill: func(id plan.BufID, b []byte) { fillWide(b, 4) }})
		}
		for mode := uint32(0); mode < 2; mode++ {
			d := plan.GELUArgs{N: int(n), M: int(m), Ldx: int(ld), Ldo: int(ld), Mode: plan.Activation(mode)}.Dispatch()
			d.Bind[1] = plan.Binding{Buf: 1}
			Compare(t, Case{Plan: SingleOp(d, ioBuf("x", sz), ioBuf("o", sz)), Outputs: []Output{F32(1)}, Seed: 5, Tol: 1e-6,
				Fill: func(id plan.BufID, b []byte) { fillWide(b, 5) }})
		}
		d = plan.SiLUMulArgs{N: int(n), M: int(m), Ldg: int(ld), Ldu: int(ld), Ldo: int(ld)}.Dispatch()
		d.Bind[1], d.Bind[2] = plan.Binding{Buf: 1}, plan.Binding{Buf: 2}
		Compare(t, Case{Plan: SingleOp(d, ioBuf("g", sz), ioBuf("u", sz), ioBuf("o", sz)), Outputs: []Output{F32(2)}, Seed: 6, Tol: 1e-6,
			Fill: func(id plan.BufID, b []byte) { fillWide(b, 8) }})
		d = plan.GELUMulArgs{N: int(n), M: int(m), Ldg: int(ld), Ldu: int(ld), Ldo: int(ld)}.Dispatch()
		d.Bind[1], d.Bind[2] = plan.Binding{Buf: 1}, plan.Binding{Buf: 2}
		Compare(t, Case{Plan: SingleOp(d, ioBuf("g", sz), ioBuf("u", sz), ioBuf("o", sz)), Outputs: []Output{F32(2)}, Seed: 8, Tol: 1e-6,
			Fill: func(id plan.BufID, b []byte) { fillWide(b, 8) }})

		for _, alias := range []bool{false, true} {
			d = plan.SoftmaxArgs{N: int(n), M: int(m), Ldx: int(ld), Ldo: int(ld), Scale: 0.125}.Dispatch()
			d.Bind[1] = plan.Binding{Buf: 1}
			bufs := []plan.Buffer{ioBuf("x", sz), ioBuf("o", sz)}
			if alias {
				d.Bind[1] = plan.Binding{Buf: 0}
				bufs = bufs[:1]
			}
			out := plan.BufID(len(bufs) - 1)
			Compare(t, Case{Plan: SingleOp(d, bufs...), Outputs: []Output{F32(out)}, Seed: 7, Tol: 1e-5,
				Fill: func(id plan.BufID, b []byte) { fillWide(b, 60) }})
		}
	}
}

func TestBackendErrors(t *testing.T) {
	be := TestBackend(t)
	_, err := be.Load(nil)
	require.Error(t, err)
	d := plan.CopyArgs{Type: ggml.Q4_0, N: 4, M: 1, Lds: 4, Ldd: 4}.Dispatch()
	d.Bind[1] = plan.Binding{Buf: 1}
	_, err = be.Load(SingleOp(d, ioBuf("x", 4), ioBuf("o", 4)))
	require.ErrorContains(t, err, "q4_0")
	w := plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 16, Data: make([]byte, 16)}
	d = plan.ScaleArgs{N: 4, M: 1, Ldx: 4, Ldo: 4, Scale: 2}.Dispatch()
	d.Bind[1] = plan.Binding{Buf: 1}
	e, err := be.Load(SingleOp(d, w, ioBuf("o", 4)))
	require.NoError(t, err)
	require.ErrorContains(t, e.Write(0, 0, []byte{1}), "read-only")
	require.Error(t, e.Write(1, 12, make([]byte, 8)))
	require.Error(t, e.Run(1, &plan.Vars{}))
	require.NoError(t, e.Run(0, &plan.Vars{}))
	require.NoError(t, e.Close())
	require.Error(t, e.Run(0, &plan.Vars{}))
}

// TestGuardPage: a kernel that reads past the end of a buffer (here a
// scale over more elements than the buffer holds) must crash on the guard
// page rather than read a neighbour's bytes. The crash happens in a child
// process (this test binary, rerun).
func TestGuardPage(t *testing.T) {
	if os.Getenv("MSLTEST_OVERRUN") == "1" {
		be := TestBackend(t)
		d := plan.ScaleArgs{N: 4096, M: 1, Ldx: 4096, Ldo: 4096, Scale: 2}.Dispatch()
		d.Bind[1] = plan.Binding{Buf: 1}
		p := SingleOp(d, ioBuf("x", 5), plan.Buffer{Name: "o", Kind: plan.IO, Size: 4096 * 4})
		e, err := be.Load(p)
		require.NoError(t, err)
		_ = e.Run(0, &plan.Vars{})
		t.Fatal("the overrun did not fault")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestGuardPage$")
	cmd.Env = append(os.Environ(), "MSLTEST_OVERRUN=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	// the fault is on a fiber stack of a C thread: the process dies of the
	// signal itself (or Go reports it, when it sees it first)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signal() == syscall.SIGSEGV || strings.Contains(string(out), "SIGSEGV"), "%v: %s", err, out)
}

package msltest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Helpers of the norm, rope, attention, argmax and sample tests: one
// dispatch is run on the CPU backend (the reference) and through the MSL
// library with the launches shaders.LaunchFor gives it, from the same
// initial buffer contents; the tests compare what both left in the
// buffers.

var (
	kitLibOnce sync.Once
	kitLib     *Library
	kitLibErr  error
	kitPool    = cpu.NewPool(2)
)

func kitLibrary(t testing.TB) *Library {
	kitLibOnce.Do(func() { kitLib, kitLibErr = Shaders() })
	require.NoError(t, kitLibErr)
	return kitLib
}

// kitOp builds a dispatch over bindings 0..len(init)-1 (nil = NoBuf).
func kitOp(k plan.Kernel, ty ggml.Type, nbind int, params ...uint32) plan.Dispatch {
	d := plan.Dispatch{Kernel: k, Type: ty, NBind: uint8(nbind)}
	copy(d.P[:], params)
	return d
}

// kitRun runs d on both backends; init[i] is binding i's initial bytes
// (nil: the binding is NoBuf). It returns each binding's final bytes, CPU
// then MSL.
func kitRun(t testing.TB, d plan.Dispatch, init [][]byte) (ref, got [][]byte) {
	t.Helper()
	return kitRunCPU(t, d, init, nil), kitRunMSL(t, d, init, nil)
}

// kitRunAlias is kitRun where binding j is bound to binding alias[j]'s
// buffer (init[j] is then ignored and its result is that buffer's).
func kitRunAlias(t testing.TB, d plan.Dispatch, init [][]byte, alias map[int]int) (ref, got [][]byte) {
	t.Helper()
	return kitRunCPU(t, d, init, alias), kitRunMSL(t, d, init, alias)
}

func kitRunCPU(t testing.TB, d plan.Dispatch, init [][]byte, alias map[int]int) [][]byte {
	t.Helper()
	var p plan.Plan
	p.Name = t.Name()
	pass, _ := p.AddPass("main")
	ids := make([]plan.BufID, len(init))
	for i, b := range init {
		d.Bind[i] = plan.Binding{Buf: plan.NoBuf}
		if b == nil {
			continue
		}
		ids[i] = p.AddBuffer(plan.Buffer{Name: "b", Kind: plan.IO, Size: int64(len(b))})
		d.Bind[i].Buf = ids[i]
	}
	for j, i := range alias {
		ids[j] = ids[i]
		d.Bind[j].Buf = ids[i]
		init[j] = nil
	}
	pass.Add(d)
	x, err := cpu.New(cpu.Options{Pool: kitPool}).Load(&p)
	require.NoError(t, err)
	defer x.Close()
	for i, b := range init {
		if b != nil {
			require.NoError(t, x.Write(ids[i], 0, b))
		}
	}
	require.NoError(t, x.Run(0, &plan.Vars{}))
	out := make([][]byte, len(init))
	for i, b := range init {
		if b != nil {
			out[i] = make([]byte, len(b))
			require.NoError(t, x.Read(ids[i], 0, out[i]))
		}
	}
	for j, i := range alias {
		out[j] = out[i]
	}
	return out
}

// kitAligned is a 16-byte aligned copy of b (at least 16 bytes long).
func kitAligned(b []byte) []byte {
	w := make([]uint64, (max(len(b), 16)+15)/8)
	a := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
	copy(a, b)
	return a[:max(len(b), 1)]
}

func kitRunMSL(t testing.TB, d plan.Dispatch, init [][]byte, alias map[int]int) [][]byte {
	t.Helper()
	lib := kitLibrary(t)
	for i := range init {
		d.Bind[i] = plan.Binding{Buf: plan.NoBuf}
		if init[i] != nil {
			d.Bind[i].Buf = plan.BufID(i)
		}
	}
	for j, i := range alias {
		d.Bind[j].Buf = plan.BufID(i)
	}
	launches, err := shaders.LaunchFor(&d, &shaders.Default, nil)
	require.NoError(t, err)
	var bufs [16]unsafe.Pointer
	mem := make([][]byte, len(init))
	dummy := kitAligned(nil)
	for i := range bufs[:8] {
		bufs[i] = unsafe.Pointer(&dummy[0])
	}
	for i, b := range init {
		if _, ok := alias[i]; b != nil && !ok {
			mem[i] = kitAligned(b)
			bufs[i] = unsafe.Pointer(&mem[i][0])
		}
	}
	for j, i := range alias {
		bufs[j] = bufs[i]
	}
	var args [shaders.ArgsSize]byte
	shaders.Args(&d, &args)
	ab := kitAligned(args[:])
	bufs[shaders.ArgsIndex] = unsafe.Pointer(&ab[0])
	var scratch []byte
	for _, ln := range launches {
		if ln.Scratch > 0 && scratch == nil {
			scratch = kitAligned(make([]byte, ln.Scratch))
			// poison: every word a kernel reads must have been written
			for i := 0; i+4 <= len(scratch); i += 4 {
				binary.LittleEndian.PutUint32(scratch[i:], 0x7fc00001)
			}
			bufs[shaders.ScratchIndex] = unsafe.Pointer(&scratch[0])
		}
	}
	for i := range launches {
		require.NoError(t, lib.Run(&launches[i], &bufs), launches[i].Function)
	}
	out := make([][]byte, len(init))
	for i, b := range init {
		if mem[i] != nil {
			out[i] = mem[i][:len(b)]
		}
	}
	for j, i := range alias {
		out[j] = out[i]
	}
	return out
}

func kitF32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func kitI32(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func kitF16(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], ggml.FP32ToFP16(x))
	}
	return b
}

func kitAsF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func kitAsF16(b []byte) []float32 {
	v := make([]float32, len(b)/2)
	for i := range v {
		v[i] = ggml.FP16ToFP32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return v
}

func kitAsI32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func kitRand(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// kitNaNs is n NaN-poisoned floats: what a kernel must not write stays so.
func kitNaNs(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

// kitCompare requires got and ref to agree element-wise within
// |got-ref| <= tol·(1+|ref|), NaN matching NaN (untouched poison), and
// returns the largest such relative error.
func kitCompare(t testing.TB, ref, got []float32, tol float64, what string) float64 {
	t.Helper()
	require.Equal(t, len(ref), len(got), what)
	worst := 0.0
	for i := range ref {
		r, g := float64(ref[i]), float64(got[i])
		if math.IsNaN(r) || math.IsNaN(g) {
			require.True(t, math.IsNaN(r) && math.IsNaN(g), "%s: element %d: got %v want %v", what, i, g, r)
			continue
		}
		e := math.Abs(g-r) / (1 + math.Abs(r))
		if e > tol {
			require.Failf(t, "mismatch", "%s: element %d: got %v want %v (err %.3g)", what, i, g, r, e)
		}
		worst = max(worst, e)
	}
	return worst
}

package msltest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Helpers of the norm, rope, attention, argmax and sample tests: one
// dispatch is run on the CPU backend (the reference) and on the executor's
// backend from the same initial buffer contents (binding by binding, with
// aliasing), and the tests compare what both left in every buffer.

var kitPool = cpu.NewPool(2)

// kitOffsets, when set, places binding i's data kitOffsets[i] bytes into
// its buffer (the binding's byte offset), as plans do for slices of wider
// buffers; the kernels must not assume more than element alignment.
var kitOffsets map[int]uint64

// kitRun runs d on both backends; init[i] is binding i's initial bytes
// (nil: the binding is NoBuf). It returns each binding's final bytes, CPU
// then MSL.
func kitRun(t testing.TB, d plan.Dispatch, init [][]byte) (ref, got [][]byte) {
	t.Helper()
	return kitRunAlias(t, d, init, nil)
}

// kitRunAlias is kitRun where binding j is bound to binding alias[j]'s
// buffer (init[j] is then ignored and its result is that buffer's).
func kitRunAlias(t testing.TB, d plan.Dispatch, init [][]byte, alias map[int]int) (ref, got [][]byte) {
	t.Helper()
	return kitRunOn(t, cpu.New(cpu.Options{Pool: kitPool}), d, init, alias),
		kitRunOn(t, kitBackend(t), d, init, alias)
}

// kitRunOn runs the one-dispatch plan on be; the executor's backend runs
// d through shaders.LaunchFor with a poisoned scratch buffer.
func kitRunOn(t testing.TB, be plan.Backend, d plan.Dispatch, init [][]byte, alias map[int]int) [][]byte {
	t.Helper()
	var p plan.Plan
	p.Name = t.Name()
	pass, _ := p.AddPass("main")
	ids := make([]plan.BufID, len(init))
	for i, b := range init {
		d.Bind[i] = plan.Binding{Buf: plan.NoBuf}
		if _, ok := alias[i]; b == nil || ok {
			continue
		}
		off := kitOffsets[i]
		ids[i] = p.AddBuffer(plan.Buffer{Name: "b", Kind: plan.IO, Size: int64(off) + int64(len(b))})
		d.Bind[i] = plan.Binding{Buf: ids[i], Off: off}
	}
	for j, i := range alias {
		ids[j] = ids[i]
		d.Bind[j] = d.Bind[i]
	}
	pass.Add(d)
	x, err := be.Load(&p)
	require.NoError(t, err)
	defer x.Close()
	for i, b := range init {
		if _, ok := alias[i]; b != nil && !ok {
			require.NoError(t, x.Write(ids[i], int64(kitOffsets[i]), b))
		}
	}
	require.NoError(t, x.Run(0, &plan.Vars{}), be.Name())
	out := make([][]byte, len(init))
	for i, b := range init {
		if _, ok := alias[i]; b != nil && !ok {
			out[i] = make([]byte, len(b))
			require.NoError(t, x.Read(ids[i], int64(kitOffsets[i]), out[i]))
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

package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// harness builds a one-pass plan from test data, loads it on a CPU backend
// with more workers than cores (so chunking is exercised), and reads back
// results. Every kernel test goes through the plan path.
type harness struct {
	t    testing.TB
	be   *Backend
	p    plan.Plan
	pass *plan.Pass
	init map[plan.BufID][]byte
	ex   *Exec
}

// testPool is shared by all tests; 3 workers on a 2-core machine still
// splits every large job.
var testPool = NewPool(3)

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, be: New(Options{Pool: testPool}), init: map[plan.BufID][]byte{}}
	h.p.Name = t.Name()
	h.pass, _ = h.p.AddPass("main")
	return h
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func bytesU16(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}

// buf declares an IO buffer with initial contents.
func (h *harness) buf(name string, data []byte) plan.BufID {
	id := h.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.IO, Size: int64(len(data))})
	h.init[id] = data
	return id
}

func (h *harness) f32(name string, v []float32) plan.BufID { return h.buf(name, ggml.F32Bytes(v)) }
func (h *harness) i32(name string, v []int32) plan.BufID   { return h.buf(name, i32Bytes(v)) }

// nan declares an f32 buffer of n elements poisoned with NaN.
func (h *harness) nan(name string, n int) plan.BufID { return h.f32(name, nans(n)) }

func (h *harness) weights(name string, data []byte) plan.BufID {
	return h.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.BufWeights, Size: int64(len(data)), Data: data})
}

func nans(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

// op builds a dispatch: binds (NoBuf allowed) at offset 0 and params.
// bind is a record's binding of a whole harness buffer (NoBuf: none).
func bind(b plan.BufID) plan.Binding { return plan.Binding{Buf: b} }

func (h *harness) add(d plan.Dispatch) { h.pass.Add(d) }

func (h *harness) load() *Exec {
	x, err := h.be.Load(&h.p)
	require.NoError(h.t, err)
	h.ex = x.(*Exec)
	for id, data := range h.init {
		require.NoError(h.t, h.ex.Write(id, 0, data))
	}
	return h.ex
}

// run loads (once) and runs the pass with vars.
func (h *harness) run(vars plan.Vars) {
	if h.ex == nil {
		h.load()
	}
	require.NoError(h.t, h.ex.Run(0, &vars))
}

func (h *harness) read(id plan.BufID) []byte {
	b := make([]byte, h.p.Buffers[id].Size)
	require.NoError(h.t, h.ex.Read(id, 0, b))
	return b
}

func (h *harness) readF32(id plan.BufID) []float32 { return ggml.BytesF32(h.read(id)) }

func (h *harness) readI32(id plan.BufID) []int32 {
	b := h.read(id)
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func randVec(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

func f16Bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], ggml.FP32ToFP16(x))
	}
	return b
}

// roundF16 is what a value becomes after a trip through an f16 buffer.
func roundF16(v []float32) []float32 {
	o := make([]float32, len(v))
	for i, x := range v {
		o[i] = ggml.FP16ToFP32(ggml.FP32ToFP16(x))
	}
	return o
}

// checkOut compares m rows of n (row stride ld) of got against want
// (dense m×n), |got-want| <= tol·(1+|want|), and requires every other
// element of got to still hold its NaN poison.
func checkOut(t *testing.T, got []float32, want []float64, m, ld, n int, tol float64, what string) {
	t.Helper()
	written := make([]bool, len(got))
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			g, w := float64(got[i*ld+j]), want[i*n+j]
			written[i*ld+j] = true
			if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
				require.Failf(t, "mismatch", "%s: row %d col %d: got %v want %v", what, i, j, g, w)
			}
		}
	}
	for i, g := range got {
		if !written[i] && !math.IsNaN(float64(g)) {
			require.Failf(t, "poison overwritten", "%s: element %d outside the output was written (%v)", what, i, g)
		}
	}
}

// toF64 widens a float32 slice for the references.
func toF64(v []float32) []float64 {
	o := make([]float64, len(v))
	for i, x := range v {
		o[i] = float64(x)
	}
	return o
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

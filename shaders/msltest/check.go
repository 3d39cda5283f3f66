package msltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// This file is the check harness kernel tests use: run one plan on the CPU
// backend (the reference) and on the executor, from the same inputs, and
// compare outputs.

var (
	sharedBE   *Backend
	sharedErr  error
	sharedOnce sync.Once
	cpuShared  *cpu.Backend
)

// Device, when set before the first TestBackend (by a test file's init),
// opens a GPU backend that the kernel tests run on instead of the executor
// ($HARK_MSLTEST_DEVICE=cuda: device_test.go). Its error fails the tests:
// a device was asked for.
var Device func() (TunedLoader, error)

// TestBackend returns the process-wide executor backend (compiled once)
// and fails t if the library does not build; with Device set, the backend
// runs on that GPU.
func TestBackend(t testing.TB) *Backend {
	t.Helper()
	sharedOnce.Do(func() {
		cpuShared = cpu.New(cpu.Options{})
		if Device != nil {
			var dev TunedLoader
			if dev, sharedErr = Device(); sharedErr == nil {
				// $HARK_MSLTEST_TUNE changes knobs of the tuning
				// (shaders.Override), e.g. MatMulMMA=16 to run the
				// end-to-end tests on CUDA's tensor-core mat_mul; the
				// base is Metal's default, or with
				// $HARK_MSLTEST_DEVICE_TUNING=1 the device's own (what
				// the host ships on that GPU: its family and modules)
				base := shaders.Default
				if d, ok := dev.(interface{ Tuning() shaders.Tuning }); ok && os.Getenv("HARK_MSLTEST_DEVICE_TUNING") == "1" {
					base = d.Tuning()
				}
				var tun shaders.Tuning
				if tun, sharedErr = shaders.Override(base, os.Getenv("HARK_MSLTEST_TUNE")); sharedErr == nil {
					sharedBE = &Backend{tuning: tun, dev: dev}
				}
			}
			return
		}
		// in the executor too, e.g. MatMulMMQ=16 to run the end-to-end
		// tests on the int8 products' MSL twin
		var tun shaders.Tuning
		if tun, sharedErr = shaders.Override(shaders.Default, os.Getenv("HARK_MSLTEST_TUNE")); sharedErr != nil {
			return
		}
		if sharedBE, sharedErr = New(); sharedErr == nil {
			sharedBE = sharedBE.WithTuning(tun)
		}
	})
	require.NoError(t, sharedErr)
	return sharedBE
}

// SingleOp returns a plan with the given buffers (BufIDs are their
// indices) and one pass holding d.
func SingleOp(d plan.Dispatch, bufs ...plan.Buffer) *plan.Plan {
	p := &plan.Plan{Name: d.Kernel.String()}
	for _, b := range bufs {
		p.AddBuffer(b)
	}
	ps, _ := p.AddPass("op")
	ps.Add(d)
	return p
}

// Output is a buffer compared after a run, read as Type (F32, F16, BF16
// or I32); Off and Len (bytes, Len 0 = to the end) select a part of it.
type Output struct {
	Buf      plan.BufID
	Type     ggml.Type
	Off, Len int64
}

// F32 is an f32 output covering the whole buffer.
func F32(b plan.BufID) Output { return Output{Buf: b, Type: ggml.F32} }

// Case describes one comparison.
type Case struct {
	Plan *plan.Plan
	Pass int
	// Steps are the step variables of each replay (nil: one zero step).
	Steps []plan.Vars
	// Fill sets the initial bytes of every IO and State buffer; nil fills
	// them with uniform f32 values in [-1, 1) from Seed. Both backends get
	// the same bytes.
	Fill func(id plan.BufID, b []byte)
	Seed uint64
	// Outputs are compared after the last step.
	Outputs []Output
	// Tol: |msl - cpu| <= Tol·max(1, |cpu|) for floats (0: bit-exact);
	// ints always compare exactly. NaN must match NaN, Inf the same Inf.
	Tol float64
}

// Result reports the worst difference per output.
type Result struct {
	MaxAbs, MaxRel []float64
}

// FillUniform fills b with f32 values uniform in [-1, 1).
func FillUniform(rng *rand.Rand, b []byte) {
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(rng.Float32()*2-1))
	}
}

// Compare runs c on both backends and fails t where outputs differ.
func Compare(t testing.TB, c Case) Result {
	t.Helper()
	ref, got := RunBoth(t, c)
	var res Result
	for oi, o := range c.Outputs {
		a, b := ref[oi], got[oi]
		require.Equal(t, len(a), len(b))
		maxAbs, maxRel := 0.0, 0.0
		for i := range a {
			if o.Type == ggml.I32 {
				require.Equal(t, a[i], b[i], "output %d (buffer %d) element %d", oi, o.Buf, i)
				continue
			}
			x, y := a[i], b[i]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				if !(math.IsNaN(x) && math.IsNaN(y)) && x != y {
					require.Failf(t, "mismatch", "output %d (buffer %d) element %d: cpu %v, msl %v", oi, o.Buf, i, x, y)
				}
				continue
			}
			d := math.Abs(x - y)
			maxAbs = max(maxAbs, d)
			maxRel = max(maxRel, d/max(1, math.Abs(x)))
			if d > c.Tol*max(1, math.Abs(x)) {
				require.Failf(t, "mismatch", "output %d (buffer %d) element %d: cpu %v, msl %v (|diff| %.3g, tol %.3g)", oi, o.Buf, i, x, y, d, c.Tol)
			}
		}
		res.MaxAbs = append(res.MaxAbs, maxAbs)
		res.MaxRel = append(res.MaxRel, maxRel)
	}
	return res
}

// kitTune, when set, is the tuning the executor runs the launches with
// (the geometry a chip family would get) instead of shaders.Default.
var kitTune *shaders.Tuning

// kitBackend is the executor backend with kitTune's launch geometry.
func kitBackend(t testing.TB) plan.Backend {
	be := TestBackend(t)
	if kitTune == nil {
		return be
	}
	return be.WithTuning(*kitTune)
}

// RunBoth runs c on the CPU backend and on the executor (with kitTune's
// launch geometry, if set) and returns each output decoded to float64
// (cpu first).
func RunBoth(t testing.TB, c Case) (ref, got [][]float64) {
	t.Helper()
	b := kitBackend(t) // kitTune's geometry when a test sets it
	rng := rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15))
	init := map[plan.BufID][]byte{}
	for i, bd := range c.Plan.Buffers {
		if bd.Kind != plan.IO && bd.Kind != plan.State {
			continue
		}
		mem := make([]byte, bd.Size)
		if c.Fill != nil {
			c.Fill(plan.BufID(i), mem)
		} else {
			FillUniform(rng, mem)
		}
		init[plan.BufID(i)] = mem
	}
	steps := c.Steps
	if steps == nil {
		steps = []plan.Vars{{}}
	}
	run := func(be plan.Backend) [][]float64 {
		e, err := be.Load(c.Plan)
		require.NoError(t, err, "%s: load", be.Name())
		defer e.Close()
		for id, mem := range init {
			require.NoError(t, e.Write(id, 0, mem))
		}
		for i := range steps {
			require.NoError(t, e.Run(c.Pass, &steps[i]), "%s: step %d", be.Name(), i)
		}
		var outs [][]float64
		for _, o := range c.Outputs {
			n := o.Len
			if n == 0 {
				n = c.Plan.Buffers[o.Buf].Size - o.Off
			}
			raw := make([]byte, n)
			require.NoError(t, e.Read(o.Buf, o.Off, raw))
			v, err := decode(raw, o.Type)
			require.NoError(t, err)
			outs = append(outs, v)
		}
		return outs
	}
	return run(cpuShared), run(b)
}

func decode(b []byte, typ ggml.Type) ([]float64, error) {
	var out []float64
	switch typ {
	case ggml.F32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	case ggml.I32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(int32(binary.LittleEndian.Uint32(b[i:]))))
		}
	case ggml.F16:
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, float64(ggml.FP16ToFP32(binary.LittleEndian.Uint16(b[i:]))))
		}
	case ggml.BF16:
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[i:]))<<16)))
		}
	default:
		return nil, fmt.Errorf("msltest: outputs of type %s cannot be compared", typ)
	}
	return out, nil
}

// fillWide fills b with f32 values uniform in [-r, r), deterministic.
func fillWide(b []byte, r float32) {
	rng := rand.New(rand.NewPCG(uint64(len(b)), uint64(r)))
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits((rng.Float32()*2-1)*r))
	}
}

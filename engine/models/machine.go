package models

import (
	"fmt"
	"strings"
)

// Machine is what the advice knows of this machine before any speech model
// is installed to measure it with: the CPU threads the engine uses, the
// CPU's vector instructions (cpu.SIMD) and the GPU driver auto would pick
// ("" = none). engine/runtime.ThisMachine fills it in.
type Machine struct {
	Cores int
	SIMD  string // "avx512", "avx2", "neon", "" (none)
	GPU   string // "metal", "cuda", "" (none)
}

func (m Machine) String() string {
	simd := m.SIMD
	if simd == "" {
		simd = "no SIMD"
	}
	gpu := "no GPU"
	if m.GPU != "" {
		gpu = m.GPU + " GPU"
	}
	return fmt.Sprintf("%d cores, %s, %s", m.Cores, strings.ToUpper(simd), gpu)
}

// The estimate's rates: milliseconds of one 30-s window's encoder pass per
// million parameters, on one CPU core of each kind. AVX2 is measured:
// the kit model (tiny's shape, 39 M) takes 433 ms with 2 threads on the
// 2-core CI machine (BENCHMARKS.md, Whisper), 22 ms·core per M. AVX-512
// doubles the vector width and adds VNNI for the quantized products, but
// the encoder is not all products: 16. Arm's NEON is half AVX2's width, on
// cores (Apple's) that issue twice as many: as AVX2. Without SIMD the
// portable loops run about four times slower: 90.
var msPerMParamCore = map[string]float64{"avx512": 16, "avx2": 22, "neon": 22, "": 90}

// gpuMsPerMParam is a GPU's rate, whatever the core count: a 30-s window
// of large-v3 (1550 M parameters, about 2.3 TFLOP in its encoder) in
// about 0.9 s, what a few TFLOP/s of an Apple M-series or a CUDA card
// give. A rough figure: the measurement replaces it once a speech model is
// installed (app/speedprobe.go).
const gpuMsPerMParam = 0.6

// maxScaling is the thread count past which Whisper stops getting faster
// (the serial host side of each window, BENCHMARKS.md).
const maxScaling = 8

// Estimate is a Probe made from the machine's description instead of a
// measurement: the window time of a model of 1 M parameters.
func (m Machine) Estimate() Probe {
	p := Probe{Model: "", Params: 1_000_000, Estimated: m.String()}
	if m.GPU != "" {
		p.Backend, p.WindowMs = m.GPU, gpuMsPerMParam
		return p
	}
	rate, ok := msPerMParamCore[m.SIMD]
	if !ok {
		rate = msPerMParamCore[""]
	}
	p.Backend, p.WindowMs = "cpu", rate/float64(min(max(m.Cores, 1), maxScaling))
	return p
}

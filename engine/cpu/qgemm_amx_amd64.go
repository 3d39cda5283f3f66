package cpu

import (
	"math"
	"os"
)

//go:noescape
func qgemmAMX(panel, act *byte, nb, tiles int, out *float32)

// amxTileConfig is LDTILECFG's 64 bytes for qgemmAMX: palette 1; tiles
// 0-3 the 8×16 int32 sums (8 rows of 64 bytes), 4 and 6 the activations
// (8 rows × 32 codes), 5 and 7 a panel block (8 groups of 64 bytes).
var amxTileConfig = func() (c [64]byte) { //nolint:unused // read by qgemm_amx_amd64.s only
	c[0] = 1
	for t, colsb := range [8]byte{64, 64, 64, 64, 32, 64, 32, 64} {
		c[16+2*t] = colsb
		c[48+t] = 8
	}
	return c
}()

// qgemmAMXRun is qgemmAMX for tiles groups (act: tiles·nb blocks, out:
// tiles·128 floats), bounds-checked once.
func qgemmAMXRun(panel, act []byte, nb, tiles int, out []float32) {
	const tsz = qTileRows * qTileCols
	if nb <= 0 {
		clear(out[:tiles*tsz])
		return
	}
	_, _, _ = panel[nb*qPanelBlock-1], act[tiles*nb*qTileRows*qActBlock-1], out[tiles*tsz-1]
	qgemmAMX(&panel[0], &act[0], nb, tiles, &out[0])
}

// qgemmAMXTile is qgemmAMXRun as a one-tile kernel (the tests').
func qgemmAMXTile(panel, act []byte, nb int, out *[qTileRows * qTileCols]float32) {
	qgemmAMXRun(panel, act, nb, 1, out[:])
}

// amxEnv turns the AMX kernel off where set to 0 (the VNNI one stays),
// and on at any thread count where set to 1.
const amxEnv = "HARK_AMX"

// amxMaxWorkers is the largest pool the AMX kernel runs on by default.
// Measured on the H200 machine's 16-core Xeon (KVM; BENCHMARKS.md, issue
// #37, amx37): SmolLM2-135M q8_0 pp512 +18% at 2 threads, but −7% at 16
// (the same binary with HARK_AMX=0 against it), where the AMX kernel's
// profile time was 1.8× the VNNI one's. 4 and 8 threads were not
// measured, so they keep the VNNI kernel.
var amxMaxWorkers = func() int {
	if os.Getenv(amxEnv) == "1" {
		return math.MaxInt
	}
	return 2
}()

// amxKernel returns the AMX kernel for a product on workers threads once
// AMX is known to work in this process, or nil; useQGemmVNNI installs it
// as qgemmAccel.
func amxKernel(workers int) qgemmRunFunc {
	if workers > amxMaxWorkers || amxWorks() != nil {
		return nil
	}
	return qgemmAMXRun
}

package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

//go:noescape
func qgemmAMX(panel, act *byte, nb, tiles int, out *float32)

func xgetbv0() (eax, edx uint32)

// amxTileConfig is LDTILECFG's 64 bytes for qgemmAMX: palette 1; tiles
// 0-3 the 8×16 int32 sums (8 rows of 64 bytes), 4 and 6 the activations
// (8 rows × 32 codes), 5 and 7 a panel block (8 groups of 64 bytes).
var amxTileConfig = func() (c [64]byte) {
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

// amxSelfTest runs qgemmAMX on random tiles (two groups a run) with every
// block count up to two chunks of four (each remainder path), the last
// with extreme codes, against qgemmVNNI: they must agree bit for bit. It
// executes AMX instructions, so it runs only where a SIGILL cannot kill
// the caller (the probe child, or tests after the probe said yes).
func amxSelfTest() error {
	r := rand.New(rand.NewPCG(37, 1))
	for nb := 1; nb <= 9; nb++ {
		if err := amxCheckRun(r, nb, 2, nb == 9); err != nil {
			return err
		}
	}
	return nil
}

// amxCheckRun compares one AMX run of tiles groups × nb blocks with the
// VNNI kernel tile by tile; extreme sets every weight code to 255 and
// every activation code to −128.
func amxCheckRun(r *rand.Rand, nb, tiles int, extreme bool) error {
	const tsz = qTileRows * qTileCols
	gb := nb * qTileRows * qActBlock
	panel := make([]byte, nb*qPanelBlock)
	act := make([]byte, tiles*gb)
	for g := 0; g < tiles; g++ {
		randQTiles(r, panel, act[g*gb:(g+1)*gb], 255)
	}
	if extreme {
		for b := 0; b < nb; b++ {
			for i := 0; i < 512; i++ {
				panel[b*qPanelBlock+i] = 255
			}
		}
		for blk := 0; blk < len(act)/qActBlock; blk++ {
			for e := 0; e < 32; e++ {
				act[blk*qActBlock+e] = 0x80
			}
		}
	}
	got := make([]float32, tiles*tsz)
	qgemmAMXRun(panel, act, nb, tiles, got)
	for g := 0; g < tiles; g++ {
		var want [tsz]float32
		qgemmVNNITile(panel, act[g*gb:(g+1)*gb], nb, &want)
		for i, v := range want {
			if w := got[g*tsz+i]; w != v {
				return fmt.Errorf("qgemmAMX nb=%d tile %d of %d out[%d] = %g, VNNI %g", nb, g, tiles, i, w, v)
			}
		}
	}
	return nil
}

// amxAllowed reports why the AMX kernel is not to be tried at all.
func amxAllowed() error {
	if os.Getenv(amxEnv) == "0" {
		return errors.New(amxEnv + "=0")
	}
	if !hasVNNI {
		return errors.New("no AVX-512 VNNI: the AMX kernel scales its sums with AVX-512 and checks itself against the VNNI kernel")
	}
	return nil
}

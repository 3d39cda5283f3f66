package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// amxOrSkip skips where AMX does not work here, saying why; with
// HARK_AMX_REQUIRE=1 (the device runs) it fails instead, so that a run
// meant to cover AMX cannot pass by skipping.
func amxOrSkip(t *testing.T) {
	t.Helper()
	err := amxWorks()
	if err == nil {
		return
	}
	if os.Getenv("HARK_AMX_REQUIRE") == "1" {
		t.Fatalf("AMX required: %v", err)
	}
	t.Skipf("AMX does not work here: %v", err)
}

// The probe's answer, with each check's reason where it says no.
func TestAMXDetection(t *testing.T) {
	amxOrSkip(t)
	require.NoError(t, amxPrecheck(), "the parent's checks pass where the child's did")
}

// AMX against the VNNI kernel, bit for bit, at block counts covering the
// four-block chunks and every remainder, with random and extreme codes.
func TestQGemmAMXMatchesVNNI(t *testing.T) {
	amxOrSkip(t)
	require.NoError(t, amxSelfTest())
	r := rand.New(rand.NewPCG(3, 7))
	for _, nb := range []int{10, 11, 13, 18, 19, 48} {
		for _, tiles := range []int{1, 3, qgemmRunTiles} {
			require.NoError(t, amxCheckRun(r, nb, tiles, false))
		}
	}
}

// The whole product with the AMX kernel forced on and off (the VNNI one),
// at odd sizes (runs of one to eight groups, cut by panel and range ends)
// against the float64 reference, the choice checked, and the two outputs
// equal bit for bit.
func TestQGemmAMXOnOff(t *testing.T) {
	amxOrSkip(t)
	defer useVNNI(hasVNNI)
	defer func(m int) { amxMaxWorkers = m }(amxMaxWorkers)
	amxMaxWorkers = math.MaxInt
	useVNNI(true)
	pool := NewPool(5)
	defer pool.Close()
	amxPtr := reflect.ValueOf(qgemmAMXRun).Pointer()
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0, ggml.IQ4_NL} {
		for _, c := range []mulCase{
			{n: 37, k: 96, m: 19, bias: true, res: true},
			{n: 45, k: 608, m: 67, ldxPad: 3, ldoPad: 2, bias: true},
			{n: 130, k: 160, m: 33, res: true, alias: true, ldoPad: 1},
		} {
			var outs [2][]float32
			for i, on := range []bool{true, false} {
				useVNNI(true)
				if !on {
					qgemmAccel = nil
				}
				mm := NewMatMul(pool)
				mm.qgemm = qgemmOn
				r := rand.New(rand.NewPCG(uint64(c.n), uint64(c.m)))
				outs[i] = checkMul(t, mm, r, typ, c)
				require.Equal(t, on, mm.qg.run != nil && reflect.ValueOf(mm.qg.run).Pointer() == amxPtr, "%s %+v amx=%v: kernel", typ, c, on)
			}
			for i := range outs[0] { // bits: the padding is NaN
				require.Equal(t, math.Float32bits(outs[1][i]), math.Float32bits(outs[0][i]), "%s %+v: AMX and VNNI out[%d]", typ, c, i)
			}
		}
	}
}

// The probe child answers on any Linux amd64 machine: the test binary
// re-executed with the probe's variable prints one verdict line and exits
// before the tests (here "ok" or the reason AMX does not work).
func TestAMXProbeChild(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), amxProbeEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 1, "%s", out)
	require.True(t, strings.HasPrefix(lines[0], "hark-amx-probe: "), "%s", out)
	t.Logf("probe: %s; parent: %v", lines[0], amxWorks())
	require.Equal(t, lines[0] == amxProbeOK, amxWorks() == nil, "the child and the parent agree")
}

// The default thread-count gate: AMX only up to amxMaxWorkers (where it
// was measured faster), unless HARK_AMX=1 lifts it.
func TestAMXWorkerGate(t *testing.T) {
	amxOrSkip(t)
	defer func(m int) { amxMaxWorkers = m }(amxMaxWorkers)
	amxMaxWorkers = 2
	require.NotNil(t, amxKernel(1))
	require.NotNil(t, amxKernel(2))
	require.Nil(t, amxKernel(3))
	require.Nil(t, amxKernel(16))
	amxMaxWorkers = math.MaxInt
	require.NotNil(t, amxKernel(16))
}

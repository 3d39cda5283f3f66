package shared

import (
	"math"
	"os"
	"strconv"
	"testing"
	"time"
)

// WaitScaleEnv names the one factor that scales every wait of the tests
// (a test that waits for something to happen bounds the wait with Wait):
// on a slow or busy machine raise it
// (2 doubles every bound) rather than editing the bounds.
const WaitScaleEnv = "HARK_TEST_TIMEOUT_SCALE"

// WaitScale is the factor from $HARK_TEST_TIMEOUT_SCALE (default 1); the
// test fails when it is not a positive number.
func WaitScale(t testing.TB) float64 {
	t.Helper()
	v := os.Getenv(WaitScaleEnv)
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		t.Fatalf("%s=%q: want a positive number (1 is the default)", WaitScaleEnv, v)
	}
	return f
}

// Wait is d scaled by WaitScale: the bound on how long a test waits for
// something that should happen (a window, a page element, a process
// exit). The bound only catches a hang; assertions never depend on it.
func Wait(t testing.TB, d time.Duration) time.Duration {
	t.Helper()
	return time.Duration(float64(d) * WaitScale(t))
}

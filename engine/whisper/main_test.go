package whisper

import (
	"os"
	"testing"

	"github.com/harkapp/hark/engine/blas"
)

// TestMain sets the BLAS library to one thread per call before any test
// runs: the model tests run in parallel, each calling sgemm from its own
// goroutine (the library's thread team would serialize them), and the
// thread count must not change while such calls are in flight.
func TestMain(m *testing.M) {
	if blas.Threads() > 1 {
		blas.SetThreads(1)
	}
	code := m.Run()
	if testing.Verbose() {
		logKitMemos()
	}
	closeKitPool()
	os.Exit(code)
}

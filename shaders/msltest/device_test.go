package msltest

import (
	"fmt"
	"os"

	"github.com/harkapp/hark/cuda"
)

// $HARK_MSLTEST_DEVICE=cuda runs the kernel and end-to-end tests of this
// package on a CUDA GPU (the kernels translated by cuda/gen) instead of the
// executor, against the same CPU references and tolerances. Executor
// self-tests (TestSelf*, the type-check, guard pages) need clang++ and are
// not device tests: run the kernel tests by name (bench/cuda/run.sh).
func init() {
	switch os.Getenv("HARK_MSLTEST_DEVICE") {
	case "":
	case "cuda":
		Device = func() (TunedLoader, error) {
			b, err := cuda.New(cuda.Options{})
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "msltest: kernels run on %s\n", b.Info())
			return b, nil
		}
	default:
		Device = func() (TunedLoader, error) {
			return nil, fmt.Errorf("HARK_MSLTEST_DEVICE=%q: only cuda is known", os.Getenv("HARK_MSLTEST_DEVICE"))
		}
	}
}

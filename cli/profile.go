package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file that receives a CPU profile of the whole
// command (`go tool pprof hark FILE`). It exists for the GPU machine, which
// has no Go toolchain: a profile taken there is read here.
const cpuProfileEnv = "HARK_CPUPROFILE"

// startCPUProfile starts the profile HARK_CPUPROFILE asks for and returns
// the function that ends it; a profile that cannot start is reported and the
// command runs without it.
func startCPUProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hark: %s: %v (running without a profile)\n", cpuProfileEnv, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "hark: %s: %v\n", cpuProfileEnv, err)
		}
	}
}

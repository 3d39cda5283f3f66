package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// cpuProfileEnv names a file that receives a CPU profile of the whole
// command (`go tool pprof hark FILE`). It exists for the GPU machine, which
// has no Go toolchain: a profile taken there is read here.
const cpuProfileEnv = "HARK_CPUPROFILE"

// traceEnv names a file that receives an execution trace of the whole
// command (`go tool trace FILE`): where goroutines waited for a P, which
// thread ran what (how `hark serve`'s stream writer and its decode share
// the cores, BENCHMARKS.md's serve section).
const traceEnv = "HARK_TRACE"

// startCPUProfile starts the profile HARK_CPUPROFILE and the trace
// HARK_TRACE ask for and returns the function that ends them; one that
// cannot start is reported and the command runs without it.
func startCPUProfile(stderr io.Writer) (stop func()) {
	stopProfile := startOutput(stderr, cpuProfileEnv, "profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startOutput(stderr, traceEnv, "trace", trace.Start, trace.Stop)
	return func() {
		stopTrace()
		stopProfile()
	}
}

// startOutput starts what env names a file for (start writes to it) and
// returns the function that ends it (end, then the file's close).
func startOutput(stderr io.Writer, env, what string, start func(io.Writer) error, end func()) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hark: %s: %v (running without a %s)\n", env, err, what)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		end()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "hark: %s: %v\n", env, err)
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv(cpuProfileEnv, path)
	var stderr bytes.Buffer
	stop := startCPUProfile(&stderr)
	stop()
	if stderr.Len() != 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // pprof writes a gzipped protobuf
		t.Fatalf("profile is %d bytes, not gzip", len(b))
	}

	t.Setenv(cpuProfileEnv, filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	stderr.Reset()
	startCPUProfile(&stderr)()
	if !bytes.Contains(stderr.Bytes(), []byte("running without a profile")) {
		t.Fatalf("an unwritable path is not reported: %q", stderr.String())
	}
}

func TestTraceEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	t.Setenv(traceEnv, path)
	var stderr bytes.Buffer
	startCPUProfile(&stderr)()
	if stderr.Len() != 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) { // a trace starts with its version line
		t.Fatalf("trace is %d bytes, starting %q", len(b), b[:min(len(b), 16)])
	}

	t.Setenv(traceEnv, filepath.Join(t.TempDir(), "missing", "trace.out"))
	stderr.Reset()
	startCPUProfile(&stderr)()
	if !bytes.Contains(stderr.Bytes(), []byte("running without a trace")) {
		t.Fatalf("an unwritable path is not reported: %q", stderr.String())
	}
}

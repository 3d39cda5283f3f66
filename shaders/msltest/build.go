package msltest

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/harkapp/hark/shaders/msl"
)

//go:embed cxx/msl.h cxx/abi.h cxx/runtime.cpp
var cxx embed.FS

// compiler returns the C++ compiler: $HARK_CXX, else clang++ (the
// compatibility layer needs clang's ext_vector_type and __fp16).
func compiler() (string, error) {
	if c := os.Getenv("HARK_CXX"); c != "" {
		return c, nil
	}
	p, err := exec.LookPath("clang++")
	if err != nil {
		return "", fmt.Errorf("msltest: clang++ not found (apt-get install clang): %w", err)
	}
	return p, nil
}

// cxxFlags are the flags of both translation units. -mf16c, -mavx2 and
// -mfma only when this CPU has them: the library is built on the machine
// that runs it (and the flags are part of the cache key).
func cxxFlags() []string {
	f := []string{"-std=c++17", "-O2", "-fPIC", "-w", "-fno-strict-aliasing", "-ffp-contract=off",
		"-Xclang", "-fnative-half-arguments-and-returns"}
	if cpu, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, feat := range []string{"f16c", "avx2", "fma"} {
			if bytes.Contains(cpu, []byte(" "+feat+" ")) {
				f = append(f, "-m"+feat)
			}
		}
	}
	// extra flags, e.g. -DMSL_UCONTEXT (the portable fiber switch)
	return append(f, strings.Fields(os.Getenv("HARK_MSLTEST_CXXFLAGS"))...)
}

func cacheRoot() (string, error) {
	if d := os.Getenv("HARK_MSLTEST_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "hark-msltest"), nil
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

var buildMu sync.Mutex

// build compiles the generated kernel unit and the runtime into a shared
// library, reusing a cached one with the same inputs. Each object is cached
// on its own, so changing a kernel does not recompile the runtime.
func build(kernels string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	cc, err := compiler()
	if err != nil {
		return "", err
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	hdr, _ := cxx.ReadFile("cxx/msl.h")
	core, sg := msl.CoreHeader, msl.SimdgroupHeader
	abi, _ := cxx.ReadFile("cxx/abi.h")
	rt, _ := cxx.ReadFile("cxx/runtime.cpp")
	flags := cxxFlags()
	fl := strings.Join(flags, " ")
	kh := hashOf("kernels", cc, fl, string(hdr), string(core), string(sg), string(abi), kernels)
	rh := hashOf("runtime", cc, fl, string(abi), string(rt))
	lib := filepath.Join(root, "lib-"+hashOf(kh, rh)+".so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	dir := filepath.Join(root, "src-"+kh)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("msltest: %w", err)
	}
	for name, data := range map[string][]byte{"msl.h": hdr, "msl_core.h": core, "msl_simdgroup.h": sg, "abi.h": abi, "runtime.cpp": rt, "kernels.cpp": []byte(kernels)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", fmt.Errorf("msltest: %w", err)
		}
	}
	objs := []string{filepath.Join(root, "rt-"+rh+".o"), filepath.Join(root, "k-"+kh+".o")}
	srcs := []string{"runtime.cpp", "kernels.cpp"}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range objs {
		if _, err := os.Stat(objs[i]); err == nil {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tmp := fmt.Sprintf("%s.%d.tmp", objs[i], os.Getpid())
			args := append(append([]string{}, flags...), "-I", dir, "-c", "-o", tmp, filepath.Join(dir, srcs[i]))
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("msltest: compiling %s (sources in %s):\n%s", srcs[i], dir, firstLines(string(out), 60))
				return
			}
			errs[i] = os.Rename(tmp, objs[i])
		}(i)
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return "", e
		}
	}
	tmp := fmt.Sprintf("%s.%d.tmp", lib, os.Getpid())
	args := []string{"-shared", "-o", tmp, objs[0], objs[1], "-lpthread"}
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("msltest: linking: %s", out)
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", fmt.Errorf("msltest: %w", err)
	}
	return lib, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

package msltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/harkapp/hark/shaders/msl"
)

// TypeCheck compiles srcs as one library with clang++ -fsyntax-only, with
// Metal's address spaces mapped to clang address spaces (device 1,
// constant 2, threadgroup 3, thread the default): a pointer or reference
// that crosses address spaces, e.g. a threadgroup pointer passed where a
// device pointer is expected, is an error as it is for the Metal compiler,
// which the executor (where every pointer is a CPU pointer) cannot see.
// Every kernel entry, template instances included, is instantiated.
func TypeCheck(srcs []msl.Source) error {
	cc, err := compiler()
	if err != nil {
		return err
	}
	unit, _, err := generate(srcs)
	if err != nil {
		return fmt.Errorf("msltest: %w", err)
	}
	dir, err := os.MkdirTemp("", "msltest-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := msl.Headers()
	for _, name := range []string{"msl.h", "abi.h"} {
		files[name], _ = cxx.ReadFile("cxx/" + name)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	src := filepath.Join(dir, "check.cpp")
	if err := os.WriteFile(src, []byte(unit), 0o644); err != nil {
		return err
	}
	args := []string{"-fsyntax-only", "-std=c++17", "-DMSL_CHECK", "-Xclang", "-fnative-half-arguments-and-returns",
		"-Wno-unknown-attributes", "-ferror-limit=40", "-I", dir, src}
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("msltest: type-check failed:\n%s", firstLines(string(out), 80))
	}
	return nil
}

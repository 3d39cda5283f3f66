//go:build (linux || darwin || freebsd || netbsd) && !android

package blas

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// candidates lists the libraries tried in order.
func candidates() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/System/Library/Frameworks/Accelerate.framework/Accelerate"}
	}
	return []string{"libopenblas.so.0", "libopenblas.so", "libblas.so.3"}
}

func open() (string, error) {
	var errs []string
	for _, name := range candidates() {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		// Dlsym first: RegisterLibFunc panics on a missing symbol, and
		// plain reference BLAS builds may lack the CBLAS layer.
		if _, err := purego.Dlsym(lib, "cblas_sgemm"); err != nil {
			errs = append(errs, fmt.Sprintf("%s: no cblas_sgemm", name))
			purego.Dlclose(lib)
			continue
		}
		purego.RegisterLibFunc(&sgemm, lib, "cblas_sgemm")
		if _, err := purego.Dlsym(lib, "openblas_set_num_threads"); err == nil {
			purego.RegisterLibFunc(&setThreads, lib, "openblas_set_num_threads")
		}
		return name, nil
	}
	return "", fmt.Errorf("blas: no library loaded (%s)", strings.Join(errs, "; "))
}

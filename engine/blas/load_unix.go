//go:build (linux || darwin || freebsd || netbsd) && !android

package blas

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// candidates lists the libraries tried in order.
func candidates() []string {
	if runtime.GOOS == "darwin" {
		return []string{"/System/Library/Frameworks/Accelerate.framework/Accelerate"}
	}
	return []string{"libopenblas.so.0", "libopenblas.so", "libblas.so.3"}
}

// coreEnv is OpenBLAS's kernel override; it is read once, when the
// library loads.
const coreEnv = "OPENBLAS_CORETYPE"

func open() (string, error) {
	if c := openBLASCore(); c != "" && os.Getenv(coreEnv) == "" {
		os.Setenv(coreEnv, c) // a user's own setting wins
	}
	var errs []string
	for _, name := range candidates() {
		lib, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		fn, err := purego.Dlsym(lib, "sgemm_")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: no sgemm_", name))
			purego.Dlclose(lib)
			continue
		}
		sgemmFn = fn
		if fn, err := purego.Dlsym(lib, "openblas_set_num_threads"); err == nil {
			setThreadsFn = fn
		}
		if fn, err := purego.Dlsym(lib, "openblas_get_corename"); err == nil {
			coreNameFn = fn
		}
		return name, nil
	}
	return "", fmt.Errorf("blas: no library loaded (%s)", strings.Join(errs, "; "))
}

// callSgemm calls sgemm_ with f's scalars; the trailing 1, 1 are the
// hidden Fortran lengths of the two character arguments.
func callSgemm(f *sgemmArgs, a, b, c unsafe.Pointer) {
	purego.SyscallN(sgemmFn,
		uintptr(unsafe.Pointer(&f.transA)), uintptr(unsafe.Pointer(&f.transB)),
		uintptr(unsafe.Pointer(&f.m)), uintptr(unsafe.Pointer(&f.n)), uintptr(unsafe.Pointer(&f.k)),
		uintptr(unsafe.Pointer(&f.alpha)), uintptr(a), uintptr(unsafe.Pointer(&f.lda)),
		uintptr(b), uintptr(unsafe.Pointer(&f.ldb)), uintptr(unsafe.Pointer(&f.beta)),
		uintptr(c), uintptr(unsafe.Pointer(&f.ldc)), 1, 1)
}

func callSetThreads(n int) { purego.SyscallN(setThreadsFn, uintptr(n)) }

// coreName asks OpenBLAS which kernels it runs.
func coreName() string {
	var f func() string
	purego.RegisterFunc(&f, coreNameFn)
	return f()
}

// Package blas calls a system BLAS's single-precision GEMM without cgo:
// OpenBLAS (or any libblas.so.3 with CBLAS symbols) on Linux and Accelerate
// on macOS, loaded at run time through purego. When no library loads,
// Available reports false and callers use their own kernels.
package blas

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// DisableEnv, when set to a non-empty value, keeps the library unloaded so
// the pure-Go fallbacks can be exercised and compared.
const DisableEnv = "HARK_NOBLAS"

var (
	loadOnce sync.Once
	loadErr  error
	libName  string

	// sgemmFn is the Fortran-interface sgemm_. Every argument is a pointer,
	// so purego.SyscallN can call it without reflection or allocation
	// (cblas_sgemm takes floats by value, which only the allocating
	// RegisterFunc path can pass).
	sgemmFn uintptr
	// setThreadsFn is openblas_set_num_threads, 0 where the library lacks it.
	setThreadsFn uintptr
	// coreNameFn is openblas_get_corename, 0 where the library lacks it.
	coreNameFn uintptr

	// callMu serialises calls while the library runs its own thread team
	// (threads != 1): OpenBLAS is not meant to be entered from several of
	// our workers at once then. With one library thread (SetThreads(1)),
	// callers may run sgemm concurrently, each on its own args slot.
	callMu  sync.Mutex
	threads int

	// argSlots hold sgemm_'s by-reference scalars. Package variables are
	// never moved by the runtime, so their addresses can cross into C;
	// freeSlots hands them out to concurrent callers without allocating.
	argSlots  [maxConcurrent]sgemmArgs
	freeSlots = func() chan *sgemmArgs {
		c := make(chan *sgemmArgs, maxConcurrent)
		for i := range argSlots {
			c <- &argSlots[i]
		}
		return c
	}()
)

// maxConcurrent bounds concurrent single-threaded calls (more wait).
const maxConcurrent = 64

type sgemmArgs struct {
	transA, transB byte
	m, n, k        int32
	lda, ldb, ldc  int32
	alpha, beta    float32
}

// ErrUnavailable is returned by Sgemm when no BLAS library could be loaded.
var ErrUnavailable = errors.New("blas: no BLAS library available")

func load() {
	loadOnce.Do(func() {
		if os.Getenv(DisableEnv) != "" {
			loadErr = fmt.Errorf("blas: disabled by %s", DisableEnv)
			return
		}
		libName, loadErr = open()
		if loadErr == nil && setThreadsFn != 0 {
			threads = runtime.NumCPU()
			callSetThreads(threads)
		}
	})
}

// Available reports whether a BLAS library was loaded.
func Available() bool {
	load()
	return loadErr == nil
}

// Library names the loaded library (with OpenBLAS's kernel family), or
// says why none is loaded.
func Library() string {
	load()
	if loadErr != nil {
		return loadErr.Error()
	}
	if coreNameFn != 0 {
		return libName + " (" + coreName() + ")"
	}
	return libName
}

// SetThreads sets the library's thread count (OpenBLAS only; others ignore
// it). n <= 0 means one per CPU. With n == 1, Sgemm may be called from
// several goroutines at once, so callers can split a product across their
// own workers; SetThreads must not run while such calls are in flight.
func SetThreads(n int) {
	load()
	if n <= 0 {
		n = runtime.NumCPU()
	}
	callMu.Lock()
	defer callMu.Unlock()
	if setThreadsFn != 0 {
		callSetThreads(n)
		threads = n
	}
}

// Threads is the thread count last set, 0 when the library cannot be told.
func Threads() int {
	load()
	callMu.Lock()
	defer callMu.Unlock()
	return threads
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices, where
// op(A) is m×k, op(B) is k×n and C is m×n. transA/transB select the
// transpose. Slice lengths are checked against the strides so a bad call
// is an error rather than memory corruption. With beta == 0, C is not read.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	load()
	if loadErr != nil {
		return ErrUnavailable
	}
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("blas: negative size m=%d n=%d k=%d", m, n, k)
	}
	if m == 0 || n == 0 {
		return nil
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkMat("A", a, ar, ac, lda); err != nil {
		return err
	}
	if err := checkMat("B", b, br, bc, ldb); err != nil {
		return err
	}
	if err := checkMat("C", c, m, n, ldc); err != nil {
		return err
	}
	const maxInt32 = 1<<31 - 1
	for _, v := range []int{m, n, k, lda, ldb, ldc} {
		if v > maxInt32 {
			return fmt.Errorf("blas: dimension %d exceeds the 32-bit BLAS interface", v)
		}
	}
	pa, pb := unsafe.Pointer(nil), unsafe.Pointer(nil)
	if k > 0 {
		pa, pb = unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0])
	} else {
		// k == 0: BLAS only scales C, but still wants valid pointers.
		pa, pb = unsafe.Pointer(&c[0]), unsafe.Pointer(&c[0])
		lda, ldb = max(lda, 1), max(ldb, 1)
	}
	callMu.Lock()
	serial := threads != 1
	if !serial {
		callMu.Unlock()
	}
	f := <-freeSlots
	// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap
	// the operands and their transposes, keep the strides.
	f.transA, f.transB = transChar(transB), transChar(transA)
	f.m, f.n, f.k = int32(n), int32(m), int32(k)
	f.lda, f.ldb, f.ldc = int32(ldb), int32(lda), int32(ldc)
	f.alpha, f.beta = alpha, beta
	callSgemm(f, pb, pa, unsafe.Pointer(&c[0]))
	freeSlots <- f
	if serial {
		callMu.Unlock()
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	return nil
}

func transChar(t bool) byte {
	if t {
		return 'T'
	}
	return 'N'
}

// checkMat verifies that s holds a rows×cols row-major matrix with stride ld.
func checkMat(name string, s []float32, rows, cols, ld int) error {
	if rows == 0 || cols == 0 {
		return nil
	}
	if ld < max(cols, 1) {
		return fmt.Errorf("blas: %s stride %d < %d columns", name, ld, cols)
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		return fmt.Errorf("blas: %s has %d elements, needs %d", name, len(s), need)
	}
	return nil
}

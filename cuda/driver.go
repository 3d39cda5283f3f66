package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API (libcuda.so.1, installed with the NVIDIA driver)
// through purego: no cgo, no CUDA toolkit. Only the calls the executor
// needs are bound; each is the versioned symbol the CUDA headers select
// for 64-bit device pointers (the _v2 names).

// ErrUnavailable is returned by New when no CUDA driver or no GPU is
// present.
var ErrUnavailable = errors.New("cuda: no NVIDIA driver (libcuda.so.1) or no CUDA GPU")

// result is CUresult.
type result int32

// dptr is CUdeviceptr; ctx, module, function, stream and event handles
// are opaque pointers.
type dptr = uint64

// Device attributes (CUdevice_attribute) read at start-up.
const (
	attrMaxThreadsPerBlock      = 1
	attrMaxSharedPerBlock       = 8
	attrWarpSize                = 10
	attrMultiprocessors         = 16
	attrComputeMajor            = 75
	attrComputeMinor            = 76
	attrMaxSharedPerBlockOptin  = 97
	funcAttrMaxThreadsPerBlock  = 0 // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	funcAttrSharedSizeBytes     = 1 // static shared memory of the function
	funcAttrMaxDynamicSharedMem = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	jitInfoLogBuffer            = 3 // CU_JIT_INFO_LOG_BUFFER
	jitInfoLogBufferSize        = 4
	jitErrorLogBuffer           = 5 // CU_JIT_ERROR_LOG_BUFFER
	jitErrorLogBufferSize       = 6
	eventDisableTiming          = 2
	streamNonBlocking           = 1
)

// driver holds the bound entry points of libcuda.
type driver struct {
	cuInit                    func(flags uint32) result
	cuDriverGetVersion        func(v *int32) result
	cuDeviceGetCount          func(n *int32) result
	cuDeviceGet               func(dev *int32, ordinal int32) result
	cuDeviceGetName           func(name *byte, n int32, dev int32) result
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) result
	cuDeviceTotalMem          func(bytes *uint64, dev int32) result
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) result
	cuDevicePrimaryCtxRelease func(dev int32) result
	cuCtxSetCurrent           func(ctx uintptr) result
	cuMemGetInfo              func(free, total *uint64) result
	cuModuleLoadDataEx        func(mod *uintptr, image unsafe.Pointer, nopts uint32, opts *int32, vals *uintptr) result
	cuModuleUnload            func(mod uintptr) result
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) result
	cuModuleGetGlobal         func(p *dptr, size *uint64, mod uintptr, name string) result
	cuFuncGetAttribute        func(v *int32, attr int32, fn uintptr) result
	cuFuncSetAttribute        func(fn uintptr, attr int32, v int32) result
	cuMemAlloc                func(p *dptr, size uint64) result
	cuMemFree                 func(p dptr) result
	cuMemAllocHost            func(p *unsafe.Pointer, size uint64) result
	cuMemFreeHost             func(p unsafe.Pointer) result
	cuMemcpyHtoD              func(dst dptr, src unsafe.Pointer, n uint64) result
	cuMemcpyHtoDAsync         func(dst dptr, src unsafe.Pointer, n uint64, stream uintptr) result
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src dptr, n uint64, stream uintptr) result
	cuMemcpyDtoDAsync         func(dst, src dptr, n uint64, stream uintptr) result
	cuMemsetD8Async           func(dst dptr, v uint8, n uint64, stream uintptr) result
	cuStreamCreate            func(s *uintptr, flags uint32) result
	cuStreamDestroy           func(s uintptr) result
	cuStreamSynchronize       func(s uintptr) result
	cuEventCreate             func(e *uintptr, flags uint32) result
	cuEventRecord             func(e, s uintptr) result
	cuEventSynchronize        func(e uintptr) result
	cuEventElapsedTime        func(ms *float32, start, end uintptr) result
	cuEventDestroy            func(e uintptr) result
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) result
	// cuLaunchKernelEx (CUDA 12.0 and newer; nil where the driver lacks
	// it): launches with attributes, for programmatic dependent launch
	// (pdl.go)
	cuLaunchKernelEx func(cfg *launchConfig, fn uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) result
	cuGetErrorName   func(r result, s **byte) result
	cuGetErrorString func(r result, s **byte) result
	cuMemsetD16Async func(dst dptr, v uint16, n uint64, stream uintptr) result
	cuMemsetD32Async func(dst dptr, v uint32, n uint64, stream uintptr) result

	// CUDA graphs (graph.go): a stream's work is recorded between
	// BeginCapture and EndCapture instead of run, instantiated once, and
	// replayed with one cuGraphLaunch. Bound only when the driver has
	// them all (CUDA 11.4 or newer); graphs is false otherwise and every
	// step is launched kernel by kernel.
	graphs                      bool
	cuStreamBeginCapture        func(s uintptr, mode uint32) result
	cuStreamEndCapture          func(s uintptr, graph *uintptr) result
	cuGraphInstantiateWithFlags func(exec *uintptr, graph uintptr, flags uint64) result
	cuGraphLaunch               func(exec, s uintptr) result
	cuGraphExecDestroy          func(exec uintptr) result
	cuGraphDestroy              func(graph uintptr) result
}

// captureThreadLocal is CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: while this
// thread captures, its own calls that could not be recorded (a
// synchronisation, a pageable copy) fail instead of running; other
// threads are unaffected.
const captureThreadLocal = 1

// driverLoader is loadDriver; tests put a recording fake (a driver whose
// fields are Go functions) in its place to check the host logic without a GPU.
var driverLoader = loadDriver

var (
	drvOnce sync.Once
	drv     *driver
	drvErr  error
)

// libcudaNames are tried in order (the versioned name is what the driver
// package installs; the plain one is a development symlink).
var libcudaNames = []string{"libcuda.so.1", "libcuda.so"}

// loadDriver opens libcuda once per process and calls cuInit.
func loadDriver() (*driver, error) {
	drvOnce.Do(func() {
		var h uintptr
		var err error
		for _, n := range libcudaNames {
			if h, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				break
			}
		}
		if err != nil {
			drvErr = fmt.Errorf("%w: %v", ErrUnavailable, err)
			return
		}
		d := &driver{}
		syms := []struct {
			fn   any
			name string
		}{
			{&d.cuInit, "cuInit"}, {&d.cuDriverGetVersion, "cuDriverGetVersion"},
			{&d.cuDeviceGetCount, "cuDeviceGetCount"}, {&d.cuDeviceGet, "cuDeviceGet"},
			{&d.cuDeviceGetName, "cuDeviceGetName"}, {&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
			{&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
			{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
			{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
			{&d.cuCtxSetCurrent, "cuCtxSetCurrent"}, {&d.cuMemGetInfo, "cuMemGetInfo_v2"},
			{&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"}, {&d.cuModuleUnload, "cuModuleUnload"},
			{&d.cuModuleGetFunction, "cuModuleGetFunction"}, {&d.cuModuleGetGlobal, "cuModuleGetGlobal_v2"},
			{&d.cuFuncGetAttribute, "cuFuncGetAttribute"}, {&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
			{&d.cuMemAlloc, "cuMemAlloc_v2"}, {&d.cuMemFree, "cuMemFree_v2"},
			{&d.cuMemAllocHost, "cuMemAllocHost_v2"}, {&d.cuMemFreeHost, "cuMemFreeHost"},
			{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
			{&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"}, {&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
			{&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
			{&d.cuMemsetD8Async, "cuMemsetD8Async"},
			{&d.cuStreamCreate, "cuStreamCreate"}, {&d.cuStreamDestroy, "cuStreamDestroy_v2"},
			{&d.cuStreamSynchronize, "cuStreamSynchronize"},
			{&d.cuEventCreate, "cuEventCreate"}, {&d.cuEventRecord, "cuEventRecord"},
			{&d.cuEventSynchronize, "cuEventSynchronize"}, {&d.cuEventElapsedTime, "cuEventElapsedTime"},
			{&d.cuEventDestroy, "cuEventDestroy_v2"}, {&d.cuLaunchKernel, "cuLaunchKernel"},
			{&d.cuGetErrorName, "cuGetErrorName"}, {&d.cuGetErrorString, "cuGetErrorString"},
			{&d.cuMemsetD16Async, "cuMemsetD16Async"}, {&d.cuMemsetD32Async, "cuMemsetD32Async"},
		}
		graphSyms := []struct {
			fn   any
			name string
		}{
			{&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"}, {&d.cuStreamEndCapture, "cuStreamEndCapture"},
			{&d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"}, {&d.cuGraphLaunch, "cuGraphLaunch"},
			{&d.cuGraphExecDestroy, "cuGraphExecDestroy"}, {&d.cuGraphDestroy, "cuGraphDestroy"},
		}
		d.graphs = true
		for _, s := range graphSyms {
			if _, err := purego.Dlsym(h, s.name); err != nil {
				d.graphs = false
				break
			}
		}
		if d.graphs {
			for _, s := range graphSyms {
				purego.RegisterLibFunc(s.fn, h, s.name)
			}
		}
		if _, err := purego.Dlsym(h, "cuLaunchKernelEx"); err == nil {
			purego.RegisterLibFunc(&d.cuLaunchKernelEx, h, "cuLaunchKernelEx")
		}
		for _, s := range syms {
			if _, err := purego.Dlsym(h, s.name); err != nil {
				drvErr = fmt.Errorf("%w: libcuda has no %s: %v", ErrUnavailable, s.name, err)
				return
			}
			purego.RegisterLibFunc(s.fn, h, s.name)
		}
		if r := d.cuInit(0); r != 0 {
			drvErr = fmt.Errorf("%w: %v", ErrUnavailable, d.err("cuInit", r))
			return
		}
		drv = d
	})
	return drv, drvErr
}

// Error is a failed driver call, with the driver's name and message.
type Error struct {
	Call    string
	Code    int
	Name    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, e.Code, e.Message)
}

// err turns a CUresult into an error (nil for CUDA_SUCCESS).
func (d *driver) err(call string, r result) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: call, Code: int(r), Name: "CUDA_ERROR", Message: "unknown error"}
	var s *byte
	if d.cuGetErrorName(r, &s) == 0 && s != nil {
		e.Name = cString(s)
	}
	s = nil
	if d.cuGetErrorString(r, &s) == 0 && s != nil {
		e.Message = cString(s)
	}
	return e
}

func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

package cuda

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Native modules: PTX of kernels written in CUDA C++ (cuda/native), made
// by cuda/gen with clang 19 for an architecture newer than the base
// module's sm_75 (tensor-core mma.sync and friends need sm_80 / PTX 7.0).
// The base module (kernels.ptx) is always loaded; a native module is
// loaded beside it on GPUs of at least its compute capability, and its
// entries are looked up before the base module's.

//go:embed kernels_sm80.ptx.xz
var kernelsSM80PTXStored []byte

//go:embed kernels_sm90a.ptx.xz
var kernelsSM90aPTXStored []byte

// The native modules' PTX, decoded at first use.
var (
	kernelsSM80PTX  = decoded("kernels_sm80.ptx.xz", kernelsSM80PTXStored)
	kernelsSM90aPTX = decoded("kernels_sm90a.ptx.xz", kernelsSM90aPTXStored)
)

// nativeModule is one native module.
type nativeModule struct {
	name       string // kernels_<name>.ptx.xz
	minCompute int    // the oldest compute capability it runs on
	maxCompute int    // the newest, or 0: an architecture-specific target (sm_90a) runs on its own capability only
	ptx        func() string
}

// nativeModules, oldest architecture first (cuda/gen's Modules).
var nativeModules = []nativeModule{
	{name: "sm80", minCompute: 80, ptx: kernelsSM80PTX},
	{name: "sm90a", minCompute: 90, maxCompute: 90, ptx: kernelsSM90aPTX},
}

// decoded returns an embedded module's PTX, decoded at its first use.
func decoded(name string, stored []byte) func() string {
	return sync.OnceValue(func() string { return mustDecode(name, stored) })
}

// modulesFor returns the native modules a GPU of compute capability cc
// loads, newest architecture first (the order entries are looked up in).
func modulesFor(cc int, all []nativeModule) []nativeModule {
	var out []nativeModule
	for i := len(all) - 1; i >= 0; i-- {
		if cc >= all[i].minCompute && (all[i].maxCompute == 0 || cc <= all[i].maxCompute) {
			out = append(out, all[i])
		}
	}
	return out
}

var entryRe = regexp.MustCompile(`(?m)^\.visible \.entry ` + entryPrefix + `(\w+)\(`)

// ptxEntries lists the MSL-style names of a module's entry points.
func ptxEntries(ptx string) map[string]bool {
	m := map[string]bool{}
	for _, s := range entryRe.FindAllStringSubmatch(ptx, -1) {
		m[s[1]] = true
	}
	return m
}

// loadedModule is a native module loaded on the device.
type loadedModule struct {
	name    string
	h       uintptr
	entries map[string]bool
	pdl     bool // made for programmatic dependent launch
}

// loadNative loads the native modules for in.Compute (their cubins where
// cubin/ has them for this GPU, else the driver JIT-compiles their PTX),
// unless noNative (Options.NoNative).
func (v *device) loadNative(in *Info, noNative bool, imgs *startImages) error {
	if noNative {
		return nil
	}
	for _, nm := range modulesFor(in.Compute, nativeModules) {
		ptx := nm.ptx()
		img, pdl := imgs.cubin(nm.name)
		entries := imgs.entryNames(nm.name)
		fromCubin := img != nil && os.Getenv("HARK_CUDA_JIT") != "1"
		if !fromCubin {
			img, pdl = jitImage(ptx, in.Compute)
		}
		if f := os.Getenv("HARK_CUDA_PTX_" + strings.ToUpper(nm.name)); f != "" { // a test variant of the module
			b, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("cuda: $HARK_CUDA_PTX_%s: %w", strings.ToUpper(nm.name), err)
			}
			ptx, img, pdl, fromCubin = string(b), append(b, 0), false, false
			entries = ptxEntries(ptx)
		}
		h, err := v.loadImage(img)
		if err != nil && fromCubin { // a cubin this driver refuses: its PTX
			img, pdl = jitImage(ptx, in.Compute)
			h, err = v.loadImage(img)
		}
		if err != nil {
			return fmt.Errorf("cuda: loading native module %s: %w", nm.name, err)
		}
		v.native = append(v.native, loadedModule{name: nm.name, h: h, entries: entries, pdl: pdl})
		in.Native = append(in.Native, nm.name)
	}
	return nil
}

// loadImage loads a cubin or a NUL-terminated PTX image and returns the
// module; an error carries the driver's JIT log.
func (v *device) loadImage(b []byte) (uintptr, error) {
	var errLog [16 << 10]byte
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{uintptr(unsafe.Pointer(&errLog[0])), uintptr(len(errLog))}
	var mod uintptr
	r := v.d.cuModuleLoadDataEx(&mod, unsafe.Pointer(&b[0]), uint32(len(opts)), &opts[0], &vals[0])
	runtime.KeepAlive(b)
	if r != 0 {
		return 0, fmt.Errorf("%w: %s", v.d.err("cuModuleLoadDataEx", r), strings.TrimSpace(cString(&errLog[0])))
	}
	return mod, nil
}

// hasNative reports whether native module name is loaded.
func (v *device) hasNative(name string) bool {
	for _, m := range v.native {
		if m.name == name {
			return true
		}
	}
	return false
}

// moduleOf is the module holding entry name: a native module's when one
// has it, else the base module; and whether it was made for programmatic
// dependent launch.
func (v *device) moduleOf(name string) (uintptr, bool) {
	for _, m := range v.native {
		if m.entries[name] {
			return m.h, m.pdl
		}
	}
	return v.mod, v.modPDL
}

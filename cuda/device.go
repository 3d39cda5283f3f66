// Package cuda is Hark's CUDA backend: a purego host over the CUDA driver
// API (libcuda.so.1; no cgo, no toolkit at run time) that runs the
// engine's plans with Hark's Metal kernels, translated to CUDA C++ and
// compiled to PTX ahead of time (cuda/gen; see README.md).
package cuda

//go:generate go run ./gen

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/cuda/ptxpdl"
	"github.com/harkapp/hark/cuda/ptxstore"
	"github.com/harkapp/hark/shaders"
)

//go:embed kernels.ptx.xz
var kernelsPTXStored []byte

// kernelsPTX is the base module's PTX, decoded at its first use (15 MB:
// ~0.17 s on the 2-core machine; only where no cubin covers the GPU, or to
// hash it for the JIT notice; the repository stores it compressed:
// cuda/ptxstore).
var kernelsPTX = sync.OnceValue(func() string { return mustDecode("kernels.ptx.xz", kernelsPTXStored) })

// mustDecode decodes an embedded module. The build embeds what cuda/gen
// wrote, and TestKernelTable and TestNativeModuleEntries decode every
// one, so a failure here is a broken build, not bad input.
func mustDecode(name string, stored []byte) string {
	b, err := ptxstore.Decode(stored)
	if err != nil {
		panic("cuda: embedded " + name + ": " + err.Error())
	}
	return string(b)
}

// MinCompute is the oldest compute capability the PTX targets (7.5).
const MinCompute = 75

// Options configure a backend.
type Options struct {
	// Device is the GPU ordinal (--gpu).
	Device int
	// Notice receives a line for the user when the kernels are compiled
	// for this GPU for the first time, and another with the time it took
	// (nil: nothing is said; jitnotice.go).
	Notice io.Writer
	// JITMarks is the folder that remembers which GPUs have compiled which
	// kernels, so the notice comes once ("": the user cache folder's
	// hark/cuda-jit). Written only when Notice is set.
	JITMarks string
	// ReportStartup writes Info.Startup to Notice at every open, JIT or
	// not ($HARK_CUDA_STARTUP=1: cold-start measurements).
	ReportStartup bool
	// Poison fills Scratch buffers at load and per-dispatch scratch before
	// every dispatch with 0xFF bytes (NaN as f32, -1 as int), so a kernel
	// reading scratch it did not write shows up ($HARK_CUDA_POISON=1 in
	// tests).
	Poison bool
	// PermuteSeed, when not zero, runs the blocks of every launch in a
	// permuted order (logical threadgroup (a*b + c) % n for random a
	// coprime with n, and c), to expose kernels that depend on the order
	// threadgroups run in ($HARK_CUDA_PERMUTE in tests).
	PermuteSeed uint64
	// NoGraphs launches every kernel from the host, as part 1 did,
	// instead of replaying recorded CUDA graphs ($HARK_CUDA_GRAPHS=0).
	NoGraphs bool
	// NoChain hides plan.Chainer, so model code runs one step per call
	// and reads results back in between, as part 1 did
	// ($HARK_CUDA_CHAIN=0).
	NoChain bool
	// Profile times every launch with events and sums the times per
	// function (Backend.Profile); graphs are off while it is on
	// ($HARK_CUDA_PROFILE=1).
	Profile bool
	// NoPDL launches every kernel after the one before it has ended,
	// instead of overlapping its launch with that kernel's tail on GPUs
	// of compute capability 9.0 and newer (pdl.go; $HARK_CUDA_PDL=0).
	NoPDL bool
	// NoDeepSplit keeps attention_paged unsplit in every step where the
	// tuning turns its split off (the cuda family), instead of splitting
	// the steps whose deepest row reads more keys than a split chunk
	// (Exec.splitsDeep; $HARK_CUDA_PAGED_SPLIT=0).
	NoDeepSplit bool
	// DeepSplitKeys is that split's chunk, and the keys past which a step's
	// deepest row splits (0: shaders.Default's AttnPagedChunk, 512; tests
	// set less, to split the rows of a small model's context).
	DeepSplitKeys int
	// NoNative loads only the base module (kernels.ptx), not the native
	// modules (modules.go), so every kernel is the translated Metal one
	// ($HARK_CUDA_NATIVE=0).
	NoNative bool
	// Tune changes knobs of the CUDA tuning, as shaders.Override reads
	// them ("MatVecRows=2,AttnChunk=64"; $HARK_CUDA_TUNE), to measure
	// other geometries without a rebuild.
	Tune string
	// AllConstants stores every launch's function constants before it,
	// as rounds 1-7 did, instead of only those whose value changed since
	// the batch's last store ($HARK_CUDA_CONSTS=all; for measuring the
	// difference).
	AllConstants bool
}

// Info describes the GPU.
type Info struct {
	Ordinal    int
	Name       string
	Compute    int // major*10 + minor
	Memory     uint64
	FreeMemory uint64
	SMs        int
	MaxThreads int
	MaxShared  int // bytes of shared memory a block may use without opting in
	// MaxSharedOptin is what a block may use after opting in (0 where the
	// driver does not say)
	MaxSharedOptin int
	Driver         int // cuDriverGetVersion (e.g. 13000)
	ModuleFromJIT  bool
	// PDL: the base module's kernels may start before the kernel they
	// follow has ended (programmatic dependent launch, pdl.go)
	PDL     bool
	Native  []string // the native modules loaded (modules.go), newest first
	Startup Startup  // how long opening took, by part
}

func (in Info) String() string {
	from := "cubin"
	if in.ModuleFromJIT {
		from = "PTX JIT"
	}
	native := "none"
	if len(in.Native) > 0 {
		native = strings.Join(in.Native, ",")
	}
	if in.PDL {
		from += " (PDL)"
	}
	return fmt.Sprintf("%s (sm_%d, %d SMs, %.1f GiB, driver %d.%d, kernels from %s, native modules %s)", in.Name, in.Compute, in.SMs,
		float64(in.Memory)/(1<<30), in.Driver/1000, in.Driver%1000/10, from, native)
}

// device is one GPU's primary context with the kernel module loaded and
// one stream. Every driver call runs on a locked OS thread with the
// context current (do).
type device struct {
	d      *driver
	ord    int32
	ctx    uintptr
	mod    uintptr
	native []loadedModule // modules.go
	// modPDL: the base module's kernels wait for the grids they depend
	// on (cuda/ptxpdl), so they may be launched before those end
	modPDL bool
	stream uintptr
	// capture records graphs (graph.go) while the stream runs the same
	// work launched kernel by kernel
	capture uintptr
	info    Info
	mu      sync.Mutex // serialises use of the stream and the constant globals
	funcsMu sync.Mutex // guards funcs: executables prepare batches concurrently
	funcs   map[string]*kernelFunc
	consts  map[int]constGlobal
}

type kernelFunc struct {
	h          uintptr
	maxThreads uint32
	static     uint32        // static shared memory bytes
	dynSet     atomic.Uint32 // dynamic shared memory the function is allowed (after opt-in)
	pdl        bool          // its module was made for programmatic dependent launch (pdl.go)
}

type constGlobal struct {
	ptr   dptr
	size  int
	name  string
	float bool
}

// funcConst describes one function constant (kernels_gen.go).
type funcConst struct {
	name  string
	index int
	size  int
	float bool
}

// do runs f with the device's context current on a locked thread.
func (v *device) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := v.d.err("cuCtxSetCurrent", v.d.cuCtxSetCurrent(v.ctx)); err != nil {
		return err
	}
	return f()
}

// openDevice retains the primary context of GPU ordinal and loads the
// kernels.
func openDevice(ordinal int, o Options) (*device, error) {
	t0 := time.Now()
	d, err := driverLoader()
	if err != nil {
		return nil, err
	}
	var start Startup
	start.Driver = time.Since(t0)
	var n int32
	if err := d.err("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver reports no GPU", ErrUnavailable)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("cuda: no GPU %d (%d present: --gpu 0..%d)", ordinal, n, n-1)
	}
	v := &device{d: d, funcs: map[string]*kernelFunc{}, consts: map[int]constGlobal{}}
	if err := d.err("cuDeviceGet", d.cuDeviceGet(&v.ord, int32(ordinal))); err != nil {
		return nil, err
	}
	in := Info{Ordinal: ordinal}
	var name [256]byte
	if err := d.err("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), v.ord)); err != nil {
		return nil, err
	}
	in.Name = cString(&name[0])
	attr := func(a int32) int {
		var x int32
		d.cuDeviceGetAttribute(&x, a, v.ord)
		return int(x)
	}
	in.Compute = attr(attrComputeMajor)*10 + attr(attrComputeMinor)
	in.SMs = attr(attrMultiprocessors)
	in.MaxThreads = attr(attrMaxThreadsPerBlock)
	in.MaxShared = attr(attrMaxSharedPerBlock)
	in.MaxSharedOptin = attr(attrMaxSharedPerBlockOptin)
	var ver int32
	d.cuDriverGetVersion(&ver)
	in.Driver = int(ver)
	d.cuDeviceTotalMem(&in.Memory, v.ord)
	if w := attr(attrWarpSize); w != 32 {
		return nil, fmt.Errorf("cuda: %s has warps of %d threads; the kernels need 32", in.Name, w)
	}
	if in.Compute < MinCompute {
		return nil, fmt.Errorf("cuda: %s is compute capability %d.%d; Hark's kernels need %d.%d or newer",
			in.Name, in.Compute/10, in.Compute%10, MinCompute/10, MinCompute%10)
	}
	imgs := prefetchStartImages(in.Compute, o.NoNative)
	t1 := time.Now()
	if err := d.err("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&v.ctx, v.ord)); err != nil {
		return nil, err
	}
	err = v.do(func() error {
		start.Context = time.Since(t1) // (cuCtxSetCurrent included)
		var total uint64
		d.cuMemGetInfo(&in.FreeMemory, &total)
		t2 := time.Now()
		note, err := v.loadModule(&in, o, imgs)
		if err != nil {
			return err
		}
		if err := v.loadNative(&in, o.NoNative, imgs); err != nil {
			return err
		}
		start.Kernels = time.Since(t2)
		note.after(start)
		if err := d.err("cuStreamCreate", d.cuStreamCreate(&v.stream, streamNonBlocking)); err != nil {
			return err
		}
		return d.err("cuStreamCreate", d.cuStreamCreate(&v.capture, streamNonBlocking))
	})
	in.Startup = start
	v.info = in
	if err != nil {
		v.close()
		return nil, err
	}
	return v, nil
}

// moduleLoads counts the kernel loads of this process, the base module
// with its native modules counted once (tests:
// one per device however many models share it).
var moduleLoads atomic.Int64

// loadModule loads the PTX (the driver compiles it for this GPU and caches
// the result in its compute cache) and finds every function constant. It
// returns the JIT notice, which the caller completes once the native
// modules have loaded too.
func (v *device) loadModule(in *Info, o Options, imgs *startImages) (jitNotice, error) {
	d := v.d
	img, pdl := imgs.cubin("kernels")
	in.ModuleFromJIT = img == nil || os.Getenv("HARK_CUDA_JIT") == "1"
	if in.ModuleFromJIT {
		img, pdl = jitImage(kernelsPTX(), in.Compute)
	}
	if f := os.Getenv("HARK_CUDA_PTX"); f != "" { // a test variant of the kernels
		b, err := os.ReadFile(f)
		if err != nil {
			return jitNotice{}, fmt.Errorf("cuda: $HARK_CUDA_PTX: %w", err)
		}
		// a variant in its PDL form (cuda/ptxpdl) is launched as one
		img, pdl, in.ModuleFromJIT = append(b, 0), in.Compute >= ptxpdl.MinCompute && bytes.Contains(b, []byte("griddepcontrol.wait")), true
	}
	// (the native modules are small: their JIT takes seconds, unannounced)
	note := jitNotice{o: o}
	if in.ModuleFromJIT {
		note = newJITNotice(o, *in, ptxHash())
	}
	note.before(*in)
	mod, err := v.loadImage(img)
	if err != nil && !in.ModuleFromJIT {
		// a driver older than the ptxas that made the cubin refuses it:
		// the PTX (ISA 6.4) still loads
		in.ModuleFromJIT = true
		note = newJITNotice(o, *in, ptxHash())
		note.before(*in)
		img, pdl = jitImage(kernelsPTX(), in.Compute)
		mod, err = v.loadImage(img)
	}
	moduleLoads.Add(1) // one a device: the native modules come with it
	if err != nil {
		return note, fmt.Errorf("cuda: loading the kernels (PTX JIT %v): %w", in.ModuleFromJIT, err)
	}
	v.mod, v.modPDL = mod, pdl
	in.PDL = pdl && d.cuLaunchKernelEx != nil
	for _, c := range funcConsts {
		var p dptr
		var size uint64
		if err := d.err("cuModuleGetGlobal("+c.name+")", d.cuModuleGetGlobal(&p, &size, v.mod, c.name)); err != nil {
			return note, err
		}
		if int(size) != c.size {
			return note, fmt.Errorf("cuda: function constant %s is %d bytes in the module, %d in the table", c.name, size, c.size)
		}
		if _, dup := v.consts[c.index]; dup {
			return note, fmt.Errorf("cuda: two function constants with index %d", c.index)
		}
		v.consts[c.index] = constGlobal{ptr: p, size: c.size, name: c.name, float: c.float}
	}
	return note, nil
}

// function returns the entry point of MSL function name (cached), with
// its limits. A function first reached at a step (a dispatch with patches
// whose launch rule picks another variant) is looked up then, from a
// goroutine that may not have the context current, so the lookup runs in
// do.
func (v *device) function(name string) (*kernelFunc, error) {
	v.funcsMu.Lock()
	defer v.funcsMu.Unlock()
	if f, ok := v.funcs[name]; ok {
		return f, nil
	}
	d := v.d
	f := &kernelFunc{}
	err := v.do(func() error {
		mod, pdl := v.moduleOf(name)
		if err := d.err("cuModuleGetFunction("+entryPrefix+name+")", d.cuModuleGetFunction(&f.h, mod, entryPrefix+name)); err != nil {
			return err
		}
		f.pdl = pdl
		var x int32
		d.cuFuncGetAttribute(&x, funcAttrMaxThreadsPerBlock, f.h)
		f.maxThreads = uint32(x)
		d.cuFuncGetAttribute(&x, funcAttrSharedSizeBytes, f.h)
		f.static = uint32(x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.dynSet.Store(uint32(max(v.info.MaxShared-int(f.static), 0)))
	v.funcs[name] = f
	return f, nil
}

// sharedFits says whether f may launch with shared bytes of dynamic shared
// memory, opting f in (cuFuncSetAttribute) to more than the default 48 KB
// up to the GPU's per-block maximum the first time a launch asks for it
// (mat_mul_big's pipeline: 112-128 KB); other functions keep the default.
func (v *device) sharedFits(f *kernelFunc, name string, shared uint32) (bool, error) {
	if shared <= f.dynSet.Load() {
		return true, nil
	}
	v.funcsMu.Lock()
	defer v.funcsMu.Unlock()
	o := v.info.MaxSharedOptin - int(f.static)
	if shared <= f.dynSet.Load() || int64(shared) > int64(o) {
		return shared <= f.dynSet.Load(), nil
	}
	d := v.d
	err := v.do(func() error {
		return d.err("cuFuncSetAttribute("+entryPrefix+name+")", d.cuFuncSetAttribute(f.h, funcAttrMaxDynamicSharedMem, int32(o)))
	})
	if err != nil {
		return false, err
	}
	f.dynSet.Store(uint32(o))
	return true, nil
}

func (v *device) close() {
	if v.ctx == 0 {
		return
	}
	_ = v.do(func() error { // closing: the teardown calls' errors have no one to go to
		if v.stream != 0 {
			v.d.cuStreamDestroy(v.stream)
		}
		if v.capture != 0 {
			v.d.cuStreamDestroy(v.capture)
		}
		for _, m := range v.native {
			v.d.cuModuleUnload(m.h)
		}
		if v.mod != 0 {
			v.d.cuModuleUnload(v.mod)
		}
		return nil
	})
	v.d.cuDevicePrimaryCtxRelease(v.ord)
	v.ctx = 0
}

// Tuning is the kernel tuning used on NVIDIA GPUs: shaders' "cuda" family
// (32-wide warps, up to 1024 threads per block; its comment says why each
// knob differs from Metal's).
func Tuning() shaders.Tuning { return shaders.TuningFor("cuda") }

// tuningFor is Tuning for the opened GPU: with the sm_80 module loaded,
// mat_mul of shaders.MatMulMMARows rows or more and unsplit attention
// over rows of one sequence run on tensor cores (q8_0, q4_0 and q5_0
// products from shaders.MatMulMMQRows on int8 ones, 8-bit activations),
// and q8_0 mat-vecs of 2 to shaders.MatVecRowsNativeRows rows on the
// native multi-row kernel (cuda/native/mat_vec_rows.cu), from
// shaders.MatVecRowsMMARows rows its tensor-core form (to
// shaders.MatVecRowsMMAMaxRows rows); with the sm_90a module
// (compute capability 9.0) the large f16 products run on wgmma.
func tuningFor(v *device) shaders.Tuning {
	t := Tuning()
	if v.hasNative("sm80") {
		t.MatMulMMA = shaders.MatMulMMARows
		t.MatMulBig = shaders.MatMulBigTiles
		t.MatMulMMQ = shaders.MatMulMMQRows
		t.AttnMMA = 1
		t.MatVecRowsNative = shaders.MatVecRowsNativeRows
		t.MatVecRowsMMA = shaders.MatVecRowsMMARows
		t.MatVecRowsMMAMax = shaders.MatVecRowsMMAMaxRows
	}
	if v.hasNative("sm90a") {
		t.MatMulWGMMA = 1
	}
	return t
}

// envOptions reads the test switches: $HARK_CUDA_POISON=1,
// $HARK_CUDA_PERMUTE=<seed>, $HARK_CUDA_GRAPHS=0, $HARK_CUDA_CHAIN=0,
// $HARK_CUDA_NATIVE=0, $HARK_CUDA_PAGED_SPLIT=0, $HARK_CUDA_CONSTS=all,
// $HARK_CUDA_PROFILE=1, $HARK_CUDA_PDL=0 and $HARK_CUDA_TUNE.
func envOptions(o Options) Options {
	if os.Getenv("HARK_CUDA_GRAPHS") == "0" {
		o.NoGraphs = true
	}
	if os.Getenv("HARK_CUDA_CHAIN") == "0" {
		o.NoChain = true
	}
	if os.Getenv("HARK_CUDA_NATIVE") == "0" {
		o.NoNative = true
	}
	if os.Getenv("HARK_CUDA_PAGED_SPLIT") == "0" {
		o.NoDeepSplit = true
	}
	if os.Getenv("HARK_CUDA_STARTUP") == "1" {
		o.ReportStartup = true
	}
	if os.Getenv("HARK_CUDA_PROFILE") == "1" {
		o.Profile = true
	}
	if os.Getenv("HARK_CUDA_PDL") == "0" {
		o.NoPDL = true
	}
	if os.Getenv("HARK_CUDA_POISON") == "1" {
		o.Poison = true
	}
	if os.Getenv("HARK_CUDA_CONSTS") == "all" {
		o.AllConstants = true
	}
	if s := os.Getenv("HARK_CUDA_TUNE"); s != "" && o.Tune == "" {
		o.Tune = s
	}
	if s := os.Getenv("HARK_CUDA_PERMUTE"); s != "" && o.PermuteSeed == 0 {
		var seed uint64
		if _, err := fmt.Sscan(s, &seed); err == nil {
			o.PermuteSeed = seed
		}
	}
	return o
}

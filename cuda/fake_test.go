package cuda

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// fakeGPU is a recording stand-in for libcuda: device memory is Go
// memory, launches are recorded instead of run, and fail makes the named
// call return an error code.
type fakeGPU struct {
	calls    []string
	launches []fakeLaunch
	mem      map[dptr][]byte
	host     [][]byte
	next     dptr
	compute  int32
	count    int32
	fail     map[string]result
	fnames   map[uintptr]string
	htod     int // bytes copied host to device
	// graphs: while capturing, stream work is recorded in capture (a
	// launch, or a memset as a closure) instead of run; cuGraphLaunch
	// runs a recorded graph's work in order
	capturing bool
	capStream uintptr // the stream capturing; work on others runs
	capture   []fakeWork
	streams   uintptr
	graphs    map[uintptr][]fakeWork
	execs     map[uintptr][]fakeWork
	nextGraph uintptr
	nextEvent uintptr
	modules   uintptr // modules loaded: each gets its own handle
	// pdlImages counts the PTX images loaded in their PDL form
	// (cuda/ptxpdl); noEx plays a driver without cuLaunchKernelEx
	pdlImages int
	noEx      bool
	// optin is the shared memory a block may opt in to (0: the driver
	// does not say); dynMax the functions' opted-in dynamic maxima
	optin  int32
	dynMax map[string]int32
}

type fakeWork struct {
	launch *fakeLaunch
	run    func()
}

type fakeLaunch struct {
	fn            string
	grid, block   [3]uint32
	shared        uint32
	nonNilParams0 bool
	prm           params // the parameter as passed (copied, as the driver does)
	replayed      bool   // run from a graph
	halted        bool   // its halt word said stop when it ran: the kernel returned at once
	overlapped    bool   // launched by cuLaunchKernelEx with programmatic stream serialization
}

// halted is what an entry's first check (msl_cuda.h's halted) says of a
// launch with parameter p running now.
func (f *fakeGPU) halted(p params) bool {
	if p.halt == 0 {
		return false
	}
	b, o := f.find(p.halt)
	return int32(uint32(b[o])|uint32(b[o+1])<<8|uint32(b[o+2])<<16|uint32(b[o+3])<<24) != p.running
}

var fakeErrName, fakeErrString = []byte("CUDA_ERROR_FAKE\x00"), []byte("the fake driver refused\x00")

// find returns the allocation holding p and p's offset in it.
func (f *fakeGPU) find(p dptr) ([]byte, int) {
	for base, b := range f.mem {
		if p >= base && p < base+dptr(len(b)) {
			return b, int(p - base)
		}
	}
	panic(fmt.Sprintf("fake GPU: no allocation holds %#x", p))
}

func (f *fakeGPU) rec(call string) result {
	f.calls = append(f.calls, call)
	return f.fail[call]
}

// stream runs work queued on stream s, or records it while s captures.
func (f *fakeGPU) stream(call string, s uintptr, work func()) result {
	if r := f.rec(call); r != 0 {
		return r
	}
	if f.capturing && s == f.capStream {
		f.capture = append(f.capture, fakeWork{run: work})
	} else {
		work()
	}
	return 0
}

func (f *fakeGPU) driver() *driver {
	consts := map[string]int{}
	for _, c := range funcConsts {
		consts[c.name] = c.size
	}
	alloc := func(n uint64) dptr {
		p := f.next
		f.mem[p] = make([]byte, n)
		f.next += dptr(n+255) &^ 255
		return p
	}
	d := &driver{
		cuInit:             func(uint32) result { return 0 },
		cuDriverGetVersion: func(v *int32) result { *v = 12040; return 0 },
		cuDeviceGetCount:   func(n *int32) result { *n = f.count; return f.rec("cuDeviceGetCount") },
		cuDeviceGet:        func(d *int32, o int32) result { *d = o; return f.rec("cuDeviceGet") },
		cuDeviceGetName: func(name *byte, n int32, _ int32) result {
			copy(unsafe.Slice(name, n), "Fake GPU\x00")
			return 0
		},
		cuDeviceGetAttribute: func(v *int32, a int32, _ int32) result {
			*v = map[int32]int32{attrMaxThreadsPerBlock: 1024, attrMaxSharedPerBlock: 48 << 10, attrMaxSharedPerBlockOptin: f.optin, attrWarpSize: 32,
				attrMultiprocessors: 4, attrComputeMajor: f.compute / 10, attrComputeMinor: f.compute % 10}[a]
			return 0
		},
		cuDeviceTotalMem:          func(b *uint64, _ int32) result { *b = 1 << 30; return 0 },
		cuDevicePrimaryCtxRetain:  func(c *uintptr, _ int32) result { *c = 1; return f.rec("cuDevicePrimaryCtxRetain") },
		cuDevicePrimaryCtxRelease: func(int32) result { return f.rec("cuDevicePrimaryCtxRelease") },
		cuCtxSetCurrent:           func(uintptr) result { return 0 },
		cuMemGetInfo:              func(free, total *uint64) result { *free, *total = 1<<30, 1<<30; return 0 },
		cuModuleLoadDataEx: func(m *uintptr, img unsafe.Pointer, _ uint32, _ *int32, vals *uintptr) result {
			if b := unsafe.Slice((*byte)(img), 4); string(b) != "\x7fELF" && strings.Contains(cStringN(img, 64<<20), "\tgriddepcontrol.wait;") {
				f.pdlImages++
			}
			f.modules++
			*m = 1 + f.modules
			if r := f.rec("cuModuleLoadDataEx"); r != 0 {
				copy(unsafe.Slice(*(**byte)(unsafe.Pointer(vals)), 64), "ptxas: line 7: fake JIT error\x00") // vals[0] is the error log buffer
				return r
			}
			return 0
		},
		cuModuleUnload: func(uintptr) result { return f.rec("cuModuleUnload") },
		cuModuleGetFunction: func(fn *uintptr, _ uintptr, name string) result {
			*fn = uintptr(len(f.fnames) + 100)
			f.fnames[*fn] = name
			return f.rec("cuModuleGetFunction")
		},
		cuModuleGetGlobal: func(p *dptr, size *uint64, _ uintptr, name string) result {
			*size = uint64(consts[name])
			*p = alloc(*size)
			return 0
		},
		cuFuncGetAttribute: func(v *int32, a int32, _ uintptr) result {
			*v = map[int32]int32{funcAttrMaxThreadsPerBlock: 1024}[a]
			return 0
		},
		cuFuncSetAttribute: func(fn uintptr, a int32, v int32) result {
			if a == funcAttrMaxDynamicSharedMem {
				if f.dynMax == nil {
					f.dynMax = map[string]int32{}
				}
				f.dynMax[f.fnames[fn]] = v
			}
			return f.rec("cuFuncSetAttribute")
		},
		cuMemAlloc: func(p *dptr, n uint64) result {
			*p = alloc(n)
			return f.rec("cuMemAlloc")
		},
		cuMemFree: func(p dptr) result { delete(f.mem, p); return f.rec("cuMemFree") },
		cuMemAllocHost: func(p *unsafe.Pointer, n uint64) result {
			b := make([]byte, n)
			f.host = append(f.host, b)
			*p = unsafe.Pointer(&b[0])
			return f.rec("cuMemAllocHost")
		},
		cuMemFreeHost: func(unsafe.Pointer) result { return f.rec("cuMemFreeHost") },
		cuMemcpyHtoD: func(dst dptr, src unsafe.Pointer, n uint64) result {
			b, o := f.find(dst)
			copy(b[o:], unsafe.Slice((*byte)(src), n))
			f.htod += int(n)
			return f.rec("cuMemcpyHtoD")
		},
		cuMemcpyHtoDAsync: func(dst dptr, src unsafe.Pointer, n uint64, _ uintptr) result {
			b, o := f.find(dst)
			copy(b[o:], unsafe.Slice((*byte)(src), n))
			f.htod += int(n)
			return f.rec("cuMemcpyHtoDAsync")
		},
		cuMemcpyDtoHAsync: func(dst unsafe.Pointer, src dptr, n uint64, _ uintptr) result {
			b, o := f.find(src)
			copy(unsafe.Slice((*byte)(dst), n), b[o:])
			return f.rec("cuMemcpyDtoHAsync")
		},
		cuMemcpyDtoDAsync: func(dst, src dptr, n uint64, st uintptr) result {
			return f.stream("cuMemcpyDtoDAsync", st, func() {
				d, o := f.find(dst)
				s, so := f.find(src)
				copy(d[o:o+int(n)], s[so:so+int(n)])
			})
		},
		cuMemsetD8Async: func(dst dptr, v uint8, n uint64, st uintptr) result {
			return f.stream("cuMemsetD8Async", st, func() {
				b, o := f.find(dst)
				for i := range b[o : o+int(n)] {
					b[o+i] = v
				}
			})
		},
		cuMemsetD16Async: func(dst dptr, v uint16, n uint64, st uintptr) result {
			return f.stream("cuMemsetD16Async", st, func() {
				b, o := f.find(dst)
				for i := range int(n) {
					b[o+2*i], b[o+2*i+1] = byte(v), byte(v>>8)
				}
			})
		},
		cuMemsetD32Async: func(dst dptr, v uint32, n uint64, st uintptr) result {
			return f.stream("cuMemsetD32Async", st, func() {
				b, o := f.find(dst)
				for i := range int(n) {
					b[o+4*i], b[o+4*i+1], b[o+4*i+2], b[o+4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
				}
			})
		},
		graphs: true,
		cuStreamBeginCapture: func(st uintptr, _ uint32) result {
			if f.capturing {
				return 900 // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
			}
			f.capturing, f.capStream, f.capture = true, st, nil
			return f.rec("cuStreamBeginCapture")
		},
		cuStreamEndCapture: func(_ uintptr, g *uintptr) result {
			f.capturing = false
			f.nextGraph++
			*g = f.nextGraph
			f.graphs[*g] = f.capture
			return f.rec("cuStreamEndCapture")
		},
		cuGraphInstantiateWithFlags: func(x *uintptr, g uintptr, _ uint64) result {
			if r := f.rec("cuGraphInstantiateWithFlags"); r != 0 {
				return r
			}
			f.nextGraph++
			*x = f.nextGraph
			f.execs[*x] = f.graphs[g]
			return 0
		},
		cuGraphLaunch: func(x, _ uintptr) result {
			if f.capturing {
				return 900
			}
			w, ok := f.execs[x]
			if !ok {
				return 400 // CUDA_ERROR_INVALID_HANDLE
			}
			for _, it := range w {
				if it.launch != nil {
					l := *it.launch
					l.replayed = true
					l.prm = f.effective(l.prm) // the step variables as they are now
					l.halted = f.halted(l.prm)
					f.launches = append(f.launches, l)
				} else {
					it.run()
				}
			}
			return f.rec("cuGraphLaunch")
		},
		cuGraphExecDestroy: func(x uintptr) result { delete(f.execs, x); return f.rec("cuGraphExecDestroy") },
		cuGraphDestroy:     func(g uintptr) result { delete(f.graphs, g); return f.rec("cuGraphDestroy") },
		cuStreamCreate: func(s *uintptr, _ uint32) result {
			f.streams++
			*s = 2 + f.streams
			return f.rec("cuStreamCreate")
		},
		cuStreamDestroy: func(uintptr) result { return f.rec("cuStreamDestroy") },
		cuStreamSynchronize: func(uintptr) result {
			if f.capturing {
				return 900 // a capture cannot wait
			}
			return f.rec("cuStreamSynchronize")
		},
		cuEventCreate: func(e *uintptr, _ uint32) result {
			f.nextEvent++
			*e = 1000 + f.nextEvent
			return f.rec("cuEventCreate")
		},
		cuEventRecord:      func(_, _ uintptr) result { return f.rec("cuEventRecord") },
		cuEventSynchronize: func(uintptr) result { return 0 },
		cuEventElapsedTime: func(ms *float32, a, b uintptr) result {
			*ms = float32(b-a) / 4 // a quarter of a millisecond between neighbours
			return f.rec("cuEventElapsedTime")
		},
		cuEventDestroy: func(uintptr) result { return f.rec("cuEventDestroy") },
		cuLaunchKernel: func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, st uintptr, pp *unsafe.Pointer, _ *unsafe.Pointer) result {
			return f.launch("cuLaunchKernel", fakeLaunch{fn: f.fnames[fn], grid: [3]uint32{gx, gy, gz}, block: [3]uint32{bx, by, bz},
				shared: shared, nonNilParams0: pp != nil && *pp != nil}, st, pp)
		},
		cuGetErrorName:   func(_ result, s **byte) result { *s = &fakeErrName[0]; return 0 },
		cuGetErrorString: func(_ result, s **byte) result { *s = &fakeErrString[0]; return 0 },
	}
	if !f.noEx {
		d.cuLaunchKernelEx = f.launchEx
	}
	return d
}

// launch records (or, while capturing, records for a graph) launch l
// made through call on stream st with parameter pp.
func (f *fakeGPU) launch(call string, l fakeLaunch, st uintptr, pp *unsafe.Pointer) result {
	if l.nonNilParams0 {
		l.prm = *(*params)(*pp)
	}
	if r := f.rec(call); r != 0 {
		return r
	}
	if f.capturing && st == f.capStream {
		f.capture = append(f.capture, fakeWork{launch: &l})
	} else {
		l.halted = f.halted(l.prm)
		f.launches = append(f.launches, l)
	}
	return 0
}

// launchEx is cuLaunchKernelEx: the fake knows one attribute, programmatic
// stream serialization, and refuses a config that is not exactly that.
func (f *fakeGPU) launchEx(cfg *launchConfig, fn uintptr, pp *unsafe.Pointer, _ *unsafe.Pointer) result {
	if cfg.nattrs != 1 || cfg.attrs == nil || cfg.attrs.id != launchAttrProgrammaticStreamSerialization || cfg.attrs.val[0] != 1 {
		return 1 // CUDA_ERROR_INVALID_VALUE
	}
	return f.launch("cuLaunchKernelEx", fakeLaunch{fn: f.fnames[fn], grid: cfg.grid, block: cfg.block, shared: cfg.shared,
		nonNilParams0: pp != nil && *pp != nil, overlapped: true}, cfg.stream, pp)
}

// cStringN is the NUL-terminated string at p, read up to n bytes.
func cStringN(p unsafe.Pointer, n int) string {
	b := unsafe.Slice((*byte)(p), n)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// withFake makes New open the fake for the test's duration.
func withFake(t *testing.T, compute int32) *fakeGPU {
	f := &fakeGPU{mem: map[dptr][]byte{}, next: 1 << 20, compute: compute, count: 1, fail: map[string]result{}, fnames: map[uintptr]string{},
		graphs: map[uintptr][]fakeWork{}, execs: map[uintptr][]fakeWork{}}
	old := driverLoader
	driverLoader = func() (*driver, error) { return f.driver(), nil }
	t.Cleanup(func() { driverLoader = old })
	return f
}

func (f *fakeGPU) count_(call string) int {
	n := 0
	for _, c := range f.calls {
		if c == call {
			n++
		}
	}
	return n
}

// Opening: a GPU index the driver lacks and a GPU too old are refused
// before a context is taken; a module that fails to load gives the
// driver's name, message and JIT log, and releases the context.
func TestFakeOpen(t *testing.T) {
	f := withFake(t, 90)
	_, err := New(Options{Device: 2})
	require.EqualError(t, err, "cuda: no GPU 2 (1 present: --gpu 0..0)")
	f.compute = 61
	_, err = New(Options{})
	require.EqualError(t, err, "cuda: Fake GPU is compute capability 6.1; Hark's kernels need 7.5 or newer")
	require.Zero(t, f.count_("cuDevicePrimaryCtxRetain"))

	f.compute = 90
	f.fail["cuModuleLoadDataEx"] = 218
	_, err = New(Options{})
	require.ErrorContains(t, err, "cuModuleLoadDataEx: CUDA_ERROR_FAKE (218): the fake driver refused: ptxas: line 7: fake JIT error")
	require.Equal(t, 1, f.count_("cuDevicePrimaryCtxRelease"))
	delete(f.fail, "cuModuleLoadDataEx")

	b, err := New(Options{})
	require.NoError(t, err)
	require.Equal(t, "Fake GPU", b.Info().Name)
	b.Close()
	require.Equal(t, 2, f.count_("cuDevicePrimaryCtxRelease"))
}

// A plan on the fake: a bad dispatch is refused before any launch, with
// the plan, pass and op in the error.
func TestFakeBoundsRefuseBeforeLaunch(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	p := &plan.Plan{Name: "bad"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 64})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.Scratch, Size: 64})
	ps, _ := p.AddPass("main")
	d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: x}, plan.Binding{Buf: y})
	d.P[0], d.P[1], d.P[2], d.P[3] = 64, 1, 64, 64 // 64 floats: 256 bytes, the buffers hold 64
	ps.Add(d)
	ex, err := b.Load(p)
	require.NoError(t, err)
	defer ex.Close()
	err = ex.Run(0, &plan.Vars{})
	require.ErrorContains(t, err, "cuda: plan bad/main op 0")
	require.Empty(t, f.launches)
	require.Error(t, ex.Read(x, 60, make([]byte, 8)))
	require.Error(t, ex.Run(1, &plan.Vars{}))
	names := make([]string, 0, len(f.fnames))
	for _, n := range f.fnames {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("functions looked up: %v", names)
}

// A good dispatch on the fake: IO goes through page-locked staging, the
// launch covers the elements with its argument record, and a failing
// launch gives the driver's message with the plan, pass and op.
func TestFakeLaunch(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	p := &plan.Plan{Name: "good"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 64})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 64})
	ps, _ := p.AddPass("main")
	d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: x}, plan.Binding{Buf: y})
	d.P[0], d.P[1], d.P[2], d.P[3] = 16, 1, 16, 16 // 16 floats
	ps.Add(d)
	ex, err := b.Load(p)
	require.NoError(t, err)
	defer ex.Close()

	in := make([]byte, 64)
	for i := range in {
		in[i] = byte(i)
	}
	require.NoError(t, ex.Write(x, 0, in))
	require.Positive(t, f.count_("cuMemAllocHost"), "IO is staged in page-locked memory")
	require.Positive(t, f.count_("cuMemcpyHtoDAsync"))
	require.NoError(t, ex.Run(0, &plan.Vars{}))
	require.Len(t, f.launches, 1)
	l := f.launches[0]
	require.Equal(t, entryPrefix+"scale", l.fn)
	threads := l.block[0] * l.block[1] * l.block[2]
	require.True(t, threads > 0 && threads <= 1024, "block %v", l.block)
	require.GreaterOrEqual(t, l.grid[0]*l.grid[1]*l.grid[2]*threads, uint32(16), "grid %v block %v", l.grid, l.block)
	require.Zero(t, l.shared%16)
	require.True(t, l.nonNilParams0, "the argument record is passed")
	out := make([]byte, 64)
	require.NoError(t, ex.Read(x, 0, out))
	require.Equal(t, in, out, "the fake's memory round-trips through staging")

	f.fail["cuLaunchKernel"] = 719
	err = ex.Run(0, &plan.Vars{})
	require.ErrorContains(t, err, "cuda: plan good/main op 0")
	require.ErrorContains(t, err, "cuLaunchKernel: CUDA_ERROR_FAKE (719): the fake driver refused")
}

// Weights are uploaded once per tensor memory: a second plan over the same
// bytes shares the upload, which is freed when the last plan using it closes.
func TestFakeWeightsOnce(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	data := make([]byte, 256)
	load := func() plan.Executable {
		p := &plan.Plan{Name: "w"}
		w := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 256, Data: data})
		y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 128})
		ps, _ := p.AddPass("main")
		d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
		d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: w}, plan.Binding{Buf: y})
		d.P[0], d.P[1], d.P[2], d.P[3] = 32, 1, 32, 32 // y (128 bytes) is not mistaken for the weights (256)
		ps.Add(d)
		ex, err := b.Load(p)
		require.NoError(t, err)
		return ex
	}
	ex1 := load()
	up := f.htod
	require.GreaterOrEqual(t, up, 256)
	ex2 := load()
	require.Equal(t, up, f.htod, "the second plan reuses the uploaded weights")
	frees := f.count_("cuMemFree")
	ex1.Close()
	weightsFreed := func() bool {
		for _, m := range f.mem {
			if len(m) == 256 {
				return false
			}
		}
		return true
	}
	require.False(t, weightsFreed(), "the second plan still uses them")
	ex2.Close()
	require.True(t, weightsFreed())
	require.Greater(t, f.count_("cuMemFree"), frees)
	b.Close()
}

// A weights buffer stacked from parts (plan.Buffer.Parts: Q|K|V of a file
// that holds them apart) is uploaded part by part into one allocation, in
// order; a second plan over the same parts shares it, and one whose parts
// lie elsewhere does not.
func TestFakeStackedWeights(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	file := make([]byte, 300)
	for i := range file {
		file[i] = byte(i)
	}
	load := func(parts ...[]byte) (plan.Executable, []byte) {
		p := &plan.Plan{Name: "s"}
		w := plan.NewWeights(p).Stack("qkv", parts...)
		y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 128})
		ps, _ := p.AddPass("main")
		d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
		d.Bind, d.NBind = plan.Binds(w, plan.Binding{Buf: y})
		d.P[0], d.P[1], d.P[2], d.P[3] = 32, 1, 32, 32
		ps.Add(d)
		ex, err := b.Load(p)
		require.NoError(t, err)
		m, o := f.find(ex.(*Exec).ptrs[w.Buf])
		return ex, m[o : o+int(p.Buffers[w.Buf].Size)]
	}
	ex1, got := load(file[200:264], file[0:64], file[100:164])
	defer ex1.Close()
	require.Equal(t, append(append(append([]byte{}, file[200:264]...), file[0:64]...), file[100:164]...), got)
	up := f.htod
	ex2, _ := load(file[200:264], file[0:64], file[100:164])
	defer ex2.Close()
	require.Equal(t, up, f.htod, "the same parts share the upload")
	ex3, got := load(file[200:264], file[1:65], file[100:164])
	defer ex3.Close()
	require.Equal(t, up+192, f.htod, "other parts of the same sizes are their own upload")
	require.Equal(t, file[1:65], got[64:128])
}

// The CUDA family's tuning by default; HARK_CUDA_TUNE (Options.Tune)
// changes knobs, and a bad one is refused before the GPU is touched.
func TestFakeTune(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	want := shaders.TuningFor("cuda")
	want.Cores = 4                         // the fake's multiprocessors
	want.MatMulMMA = shaders.MatMulMMARows // sm_90 loads the sm_80 module
	want.MatMulBig = shaders.MatMulBigTiles
	want.MatMulMMQ = shaders.MatMulMMQRows
	want.AttnMMA = 1
	want.MatVecRowsNative = shaders.MatVecRowsNativeRows
	want.MatVecRowsMMA = shaders.MatVecRowsMMARows
	want.MatVecRowsMMAMax = shaders.MatVecRowsMMAMaxRows
	want.MatMulWGMMA = 1 // and, on 9.0, the sm_90a module
	require.Equal(t, want, b.tuning)
	b.Close()
	b, err = New(Options{NoNative: true})
	require.NoError(t, err)
	noNative := shaders.TuningFor("cuda")
	noNative.Cores = 4
	require.Equal(t, noNative, b.tuning)
	b.Close()
	t.Setenv("HARK_CUDA_TUNE", "MatVecRows=2,AttnChunk=64")
	b, err = New(Options{})
	require.NoError(t, err)
	require.Equal(t, uint32(2), b.tuning.MatVecRows)
	require.Equal(t, uint32(64), b.tuning.AttnChunk)
	b.Close()
	retains := f.count_("cuDevicePrimaryCtxRetain")
	_, err = New(Options{Tune: "MatVecRows=0"})
	require.ErrorContains(t, err, "positive integer")
	require.Equal(t, retains, f.count_("cuDevicePrimaryCtxRetain"))
}

// The cuda family uploads q8_0 weights that only mat-vec kernels read in
// the repacked layout (shaders.Layouts) and launches the "_rp" kernels on
// them; HARK_CUDA_TUNE=Repack=1 keeps the file's bytes and kernels. The two
// layouts are separate uploads of the same tensor memory.
func TestFakeRepackedUpload(t *testing.T) {
	f := withFake(t, 90)
	const n, k = 3, 64
	data := make([]byte, n*k/32*34)
	for i := range data {
		data[i] = byte(i*7 + 1)
	}
	load := func(b *Backend) ([]byte, string) {
		p := &plan.Plan{Name: "rp"}
		w := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: int64(len(data)), Data: data})
		x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 4 * k})
		y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.IO, Size: 4 * n})
		ps, _ := p.AddPass("main")
		ps.Add(plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: w}, X: plan.Binding{Buf: x}, Out: plan.Binding{Buf: y},
			Bias: plan.None, Res: plan.None, N: n, K: k, M: 1, Ldx: k, Ldo: n, Ldr: n}.Dispatch())
		ex, err := b.Load(p)
		require.NoError(t, err)
		t.Cleanup(func() { ex.Close() })
		require.NoError(t, ex.Run(0, &plan.Vars{}))
		m, o := f.find(ex.(*Exec).ptrs[w])
		require.NotEmpty(t, f.launches)
		return m[o:], f.launches[len(f.launches)-1].fn
	}
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	want, err := shaders.Layout{Type: ggml.Q8_0, K: k}.Repack(data)
	require.NoError(t, err)
	got, fn := load(b)
	require.Equal(t, want, got[:len(want)], "uploaded repacked")
	require.Contains(t, fn, "mat_vec_q8_0_rp")

	bf, err := New(Options{Tune: "Repack=1"})
	require.NoError(t, err)
	defer bf.Close()
	got, fn = load(bf)
	require.Equal(t, data, got[:len(data)], "uploaded as the file holds it")
	require.NotContains(t, fn, "_rp")
	require.Contains(t, fn, "mat_vec_q8_0")
}

// A launch asking for more than the default 48 KB of dynamic shared memory
// (mat_mul_big's pipeline, 128 KB) opts its function in to the GPU's
// per-block maximum the first time, and only that function; where the
// driver gives no opt-in maximum the plan is refused before anything runs.
func TestFakeSharedOptIn(t *testing.T) {
	const n, k, m = 16, 32, 16
	load := func(b *Backend) (plan.Executable, error) {
		p := &plan.Plan{Name: "big"}
		w := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 2 * n * k, Data: make([]byte, 2*n*k)})
		x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 4 * m * k})
		o := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: 4 * m * n})
		ps, _ := p.AddPass("main")
		ps.Add(plan.MatMulArgs{Type: ggml.F16, W: plan.Binding{Buf: w}, X: plan.Binding{Buf: x}, Out: plan.Binding{Buf: o},
			Bias: plan.None, Res: plan.None, N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n}.Dispatch())
		return b.Load(p)
	}
	f := withFake(t, 90)
	b, err := New(Options{Tune: "MatMulBig=1,MatMulWGMMA=1000000"})
	require.NoError(t, err)
	ex, err := load(b)
	if err == nil { // the launch table's checks may come at the first run
		err = ex.Run(0, &plan.Vars{})
		ex.Close()
	}
	require.ErrorContains(t, err, "mat_mul_big_f16: 131072 bytes of threadgroup memory")
	require.Empty(t, f.dynMax)
	require.Empty(t, f.launches)
	b.Close()

	f = withFake(t, 90)
	f.optin = 227 << 10
	b, err = New(Options{Tune: "MatMulBig=1,MatMulWGMMA=1000000"})
	require.NoError(t, err)
	defer b.Close()
	ex, err = load(b)
	require.NoError(t, err)
	defer ex.Close()
	require.NoError(t, ex.Run(0, &plan.Vars{}))
	require.Equal(t, map[string]int32{entryPrefix + "mat_mul_big_f16": 227 << 10}, f.dynMax, "only the function that asked")
	require.Len(t, f.launches, 1)
	require.Equal(t, uint32(128<<10), f.launches[0].shared)
}

// The staging buffer: writes queued between two waits that do not fit it
// wait once, and the buffer grows to hold them together, so the same
// writes (a joining sequence's sampler settings and 2n+1 counts, then the
// step's tables) fit from then on without a wait; their bytes arrive.
func TestFakeStagingGrowsToTheWritesBetweenWaits(t *testing.T) {
	f := withFake(t, 90)
	b, err := New(Options{})
	require.NoError(t, err)
	defer b.Close()
	p := &plan.Plan{Name: "staging"}
	small := p.AddBuffer(plan.Buffer{Name: "settings", Kind: plan.IO, Size: 256})
	big := p.AddBuffer(plan.Buffer{Name: "counts", Kind: plan.IO, Size: 400 << 10})
	ex, err := b.Load(p)
	require.NoError(t, err)
	defer ex.Close()
	e := ex.(*Exec)
	s, c := make([]byte, 256), make([]byte, 400<<10)
	for i := range c {
		c[i] = byte(i * 7)
	}
	waits := func() int { return e.stageWaits }
	for round := range 3 {
		s[0] = byte(round)
		w0 := waits()
		require.NoError(t, ex.Write(small, 0, s))
		require.NoError(t, ex.Write(big, 0, c))
		require.NoError(t, ex.Write(small, 0, s))
		if round == 0 {
			require.Equal(t, 1, waits()-w0, "the first time: one wait, then the buffer grows")
		} else {
			require.Zero(t, waits()-w0, "round %d: the writes fit, no wait", round)
		}
		got := make([]byte, len(c))
		require.NoError(t, ex.Read(big, 0, got)) // a wait: the queued bytes are free again
		require.Equal(t, c, got)
		require.NoError(t, ex.Read(small, 0, got[:256]))
		require.Equal(t, s, got[:256])
	}
	require.GreaterOrEqual(t, e.stageN, uint64(256+(400<<10)+256))
	require.Positive(t, f.count_("cuMemAllocHost"))
}

package metal

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// fakeDevice records what the executor asks of Metal. Buffers are Go
// memory; command buffers complete at once.
type fakeDevice struct {
	in       Info
	bufs     map[handle]*fakeBuf
	next     handle
	pipes    map[string]pipeline
	compiles int
	log      []string // commits, waits, releases, in order
	cbs      []*fakeCB
	event    uint64
	signaled uint64
	failCB   int // 1-based index of a command buffer that fails, 0 = none
	// record turns off per-command recording (benchmarks).
	record bool
	calls  int // encoder calls, recorded or not
	// misaligned counts buffer offsets that are not a multiple of 4, which
	// Metal does not accept for device buffers read as 4-byte types.
	misaligned int
}

type fakeBuf struct {
	mem     []byte
	mode    storage
	wrapped bool
	freed   bool
}

func newFakeDevice() *fakeDevice {
	return &fakeDevice{
		in:     Info{Name: "fake", Family: "apple8", PageSize: 16384, MaxBuffer: 1 << 30, Unified: true, MaxThreadgroupMemory: 32 << 10, DeviceFence: true},
		bufs:   map[handle]*fakeBuf{},
		next:   1,
		pipes:  map[string]pipeline{},
		record: true,
	}
}

func (f *fakeDevice) info() Info { return f.in }

func (f *fakeDevice) newBuffer(size int64, mode storage) (buffer, error) {
	if size <= 0 {
		return buffer{}, fmt.Errorf("fake: buffer of %d bytes", size)
	}
	h := f.next
	f.next++
	fb := &fakeBuf{mem: make([]byte, size), mode: mode}
	f.bufs[h] = fb
	b := buffer{h: h, size: size}
	if mode == shared {
		b.mem = fb.mem
	}
	return b, nil
}

func (f *fakeDevice) wrap(mem []byte) (buffer, error) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	if p%uintptr(f.in.PageSize) != 0 || len(mem)%f.in.PageSize != 0 {
		return buffer{}, fmt.Errorf("fake: wrap of %d bytes at %#x is not page-aligned", len(mem), p)
	}
	h := f.next
	f.next++
	f.bufs[h] = &fakeBuf{mem: mem, mode: shared, wrapped: true}
	return buffer{h: h, size: int64(len(mem)), mem: mem}, nil
}

func (f *fakeDevice) release(b buffer) {
	fb := f.bufs[b.h]
	if fb == nil || fb.freed {
		panic(fmt.Sprintf("fake: release of unknown or freed buffer %d", b.h))
	}
	fb.freed = true
}

func (f *fakeDevice) pipeline(fn string, consts []shaders.Constant) (pipeline, error) {
	key := fmt.Sprint(fn, consts)
	if p, ok := f.pipes[key]; ok {
		return p, nil
	}
	if fn == "bad_function" {
		return pipeline{}, errors.New("fake: function bad_function not found in the library")
	}
	f.compiles++
	p := pipeline{h: handle(1000 + len(f.pipes)), maxThreads: 1024, execWidth: 32}
	if fn == "heavy" {
		p.maxThreads = 256
	}
	f.pipes[key] = p
	return p, nil
}

func (f *fakeDevice) commandBuffer() (cmdBuffer, error) {
	cb := &fakeCB{dev: f, n: len(f.cbs) + 1}
	f.cbs = append(f.cbs, cb)
	return cb, nil
}

func (f *fakeDevice) close() {}

// leaked lists buffers never released (weights wraps included).
func (f *fakeDevice) leaked() int {
	n := 0
	for _, b := range f.bufs {
		if !b.freed {
			n++
		}
	}
	return n
}

type fakeCB struct {
	dev       *fakeDevice
	n         int
	cmds      []cmd
	committed bool
	aborted   bool
	released  bool
	value     uint64
}

func (c *fakeCB) encoder() encoder { return c }

func (c *fakeCB) commit() uint64 {
	c.committed = true
	c.dev.event++
	c.value = c.dev.event
	c.dev.signaled = c.value
	c.dev.log = append(c.dev.log, fmt.Sprintf("commit %d", c.value))
	return c.value
}

func (c *fakeCB) abort() { c.aborted = true; c.dev.log = append(c.dev.log, "abort") }

func (c *fakeCB) wait() error {
	c.dev.log = append(c.dev.log, fmt.Sprintf("wait %d", c.value))
	if !c.committed || c.aborted {
		panic("fake: wait on a command buffer never committed")
	}
	if c.n == c.dev.failCB {
		return errors.New("Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)")
	}
	return nil
}

func (c *fakeCB) gpuTime() (float64, float64) { return 1, 1.001 }

func (c *fakeCB) release() {
	if c.released {
		panic("fake: command buffer released twice")
	}
	c.released = true
}

// cmd is one recorded encoder call.
type cmd struct {
	op      string // pipe, buf, off, bytes, tgmem, dispatch, barrier
	bulk    bool   // buf set by setBuffers
	h       handle
	off     uint64
	index   int
	args    [shaders.ArgsSize]byte
	groups  [3]uint32
	threads [3]uint32
}

func (c *fakeCB) add(x cmd) {
	if (x.op == "buf" || x.op == "off") && x.off%4 != 0 {
		c.dev.misaligned++
	}
	c.dev.calls++
	if c.dev.record {
		c.cmds = append(c.cmds, x)
	}
}

func (c *fakeCB) setPipeline(p handle) { c.add(cmd{op: "pipe", h: p}) }
func (c *fakeCB) setBuffer(b handle, off uint64, index int) {
	c.add(cmd{op: "buf", h: b, off: off, index: index})
}

// setBuffers is one call, recorded as one "buf" per index so tests read
// bindings the same way.
func (c *fakeCB) setBuffers(bufs []handle, offs []uint64, start int) {
	c.dev.calls++
	for _, o := range offs {
		if o%4 != 0 {
			c.dev.misaligned++
		}
	}
	if c.dev.record {
		for i := range bufs {
			c.cmds = append(c.cmds, cmd{op: "buf", h: bufs[i], off: offs[i], index: start + i, bulk: true})
		}
	}
}

func (c *fakeCB) setBufferOffset(off uint64, index int) {
	c.add(cmd{op: "off", off: off, index: index})
}
func (c *fakeCB) setBytes(a *[shaders.ArgsSize]byte, index int) {
	c.add(cmd{op: "bytes", args: *a, index: index})
}
func (c *fakeCB) setThreadgroupMemory(n uint32, index int) {
	c.add(cmd{op: "tgmem", off: uint64(n), index: index})
}
func (c *fakeCB) dispatch(g, t [3]uint32) { c.add(cmd{op: "dispatch", groups: g, threads: t}) }
func (c *fakeCB) barrier()                { c.add(cmd{op: "barrier"}) }

// testLaunch stands in for shaders.LaunchFor while the kernels are written
// elsewhere: one launch per dispatch named after kernel and type, 256
// threads, a threadgroup per Grid row; Argmax and Attention take two
// launches sharing per-dispatch scratch, as the real two-stage kernels do.
func testLaunch(d *plan.Dispatch, t *shaders.Tuning, dst []shaders.Launch) ([]shaders.Launch, error) {
	g := [3]uint32{max(d.Grid[0], 1), max(d.Grid[1], 1), max(d.Grid[2], 1)}
	fn := testFunction(d)
	l := shaders.Launch{Function: fn, Groups: g, Threads: [3]uint32{t.MatVecSIMDGroups * t.SIMDWidth, 1, 1}}
	switch d.Kernel {
	case plan.Argmax, plan.Attention:
		l.Scratch = 4096
		l.Threadgroup = 1000
		l2 := l
		l2.Function = testMerge(fn)
		l2.Groups = [3]uint32{g[1], 1, 1}
		return append(dst, l, l2), nil
	}
	return append(dst, l), nil
}

// testFunction names a dispatch's function without allocating after the
// first use, as a real launch table of constant names does.
func testFunction(d *plan.Dispatch) string {
	k := fnKey{d.Kernel, d.Type}
	if fn, ok := testNames[k]; ok {
		return fn
	}
	fn := d.Kernel.String()
	switch d.Kernel {
	case plan.MatVec, plan.MatMul, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.Embed, plan.Conv1D, plan.Attention, plan.RopeKV, plan.Copy:
		fn += "_" + d.Type.String()
	}
	testNames[k] = fn
	return fn
}

// testMerge names the second launch of a two-stage kernel.
func testMerge(fn string) string {
	m, ok := testMerges[fn]
	if !ok {
		m = fn + "_merge"
		testMerges[fn] = m
	}
	return m
}

var testMerges = map[string]string{}

type fnKey struct {
	k plan.Kernel
	t ggml.Type
}

var testNames = map[fnKey]string{}

// newTestBackend is a backend on a fake device with the test launch rule.
func newTestBackend() (*Backend, *fakeDevice) {
	dev := newFakeDevice()
	b := newBackend(dev)
	b.launch = testLaunch
	b.missing = func() []plan.Kernel { return nil }
	return b, dev
}

package metal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"

	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/shaders"
)

// The Metal host: purego messages to Metal's Objective-C API, as narrow as
// the device interface. Nothing here has run on real hardware yet (see
// README.md); every call is a plain message send whose selector and
// argument types follow Apple's headers.

// Metal enum values (MTLGPUFamily, MTLResourceOptions, ...).
const (
	familyApple7 = 1007
	familyApple8 = 1008
	familyApple9 = 1009
	familyMac2   = 2002
	// MTLLanguageVersion3_2 ((major << 16) + minor)
	mtlLanguageVersion3_2 = 3<<16 + 2

	resourceStorageShared  = 0 << 4
	resourceStoragePrivate = 2 << 4

	dispatchConcurrent = 1 // MTLDispatchTypeConcurrent
	barrierScopeBuffer = 1 // MTLBarrierScopeBuffers
	dataTypeUInt       = 33
	mathModeRelaxed    = 1 // MTLMathModeRelaxed: fast, but keeps Inf and NaN

	cmdStatusCompleted = 4
	cmdStatusError     = 5
)

var (
	loadOnce sync.Once
	loadErr  error

	createSystemDefaultDevice func() objc.ID

	// msgSend is objc_msgSend. The encoder's messages with integer and
	// pointer arguments call it through purego.SyscallN, which skips the
	// reflection of a registered Go signature (about half the cost, one
	// allocation instead of seven; BenchmarkPuregoCall).
	msgSend uintptr

	// Messages bound once with their exact C signatures (purego handles
	// the struct-by-value ABI of MTLSize and the float and bool returns).
	msgDispatch     func(enc objc.ID, sel objc.SEL, groups, threads mtlSize)
	msgSignal       func(cb objc.ID, sel objc.SEL, ev objc.ID, value uint64)
	msgWaitEvent    func(ev objc.ID, sel objc.SEL, value, timeoutMS uint64) bool
	msgSignaled     func(ev objc.ID, sel objc.SEL) uint64
	msgU64          func(obj objc.ID, sel objc.SEL) uint64
	msgBool         func(obj objc.ID, sel objc.SEL) bool
	msgBoolArg      func(obj objc.ID, sel objc.SEL, arg uint64) bool
	msgF64          func(obj objc.ID, sel objc.SEL) float64
	msgPtr          func(obj objc.ID, sel objc.SEL) unsafe.Pointer
	msgStr          func(obj objc.ID, sel objc.SEL) string
	msgID           func(obj objc.ID, sel objc.SEL) objc.ID
	msgIDArg        func(obj objc.ID, sel objc.SEL, a objc.ID) objc.ID
	msgVoid         func(obj objc.ID, sel objc.SEL)
	msgVoidU64      func(obj objc.ID, sel objc.SEL, a uint64)
	msgNewBuffer    func(dev objc.ID, sel objc.SEL, length, options uint64) objc.ID
	msgNoCopy       func(dev objc.ID, sel objc.SEL, p unsafe.Pointer, length, options uint64, dealloc objc.ID) objc.ID
	msgNewLibrary   func(dev objc.ID, sel objc.SEL, src, opts objc.ID, err *objc.ID) objc.ID
	msgNewFunction  func(lib objc.ID, sel objc.SEL, name, values objc.ID, err *objc.ID) objc.ID
	msgNewPipeline  func(dev objc.ID, sel objc.SEL, fn objc.ID, err *objc.ID) objc.ID
	msgSetConstant  func(values objc.ID, sel objc.SEL, p unsafe.Pointer, typ, index uint64)
	msgEncoderOfCB  func(cb objc.ID, sel objc.SEL, dispatchType uint64) objc.ID
	msgResponds     func(obj objc.ID, sel objc.SEL, query objc.SEL) bool
	msgFunctionName func(lib objc.ID, sel objc.SEL, name objc.ID) objc.ID
)

// Selectors, registered once.
var sel struct {
	init, new, release, retain                                       objc.SEL
	name, supportsFamily, workingSet, unified, maxBufferLength       objc.SEL
	newCommandQueue, newSharedEvent, commandBuffer, encoder          objc.SEL
	newLibrary, newFunction, newFunctionConst, newPipeline           objc.SEL
	maxThreads, execWidth, newBuffer, newBufferNoCopy, contents      objc.SEL
	setPipeline, setBuffer, setOffset, setBytes, setTGMem, dispatch  objc.SEL
	setBuffers, maxTGMem                                             objc.SEL
	barrier, endEncoding, signal, commit, waitUntilCompleted, status objc.SEL
	errorSel, utf8                                                   objc.SEL
	gpuStart, gpuEnd, waitSignaled, signaledValue, setConstant       objc.SEL
	setFastMath, setMathMode, responds                               objc.SEL
	languageVersion                                                  objc.SEL
}

func loadMetal() error {
	loadOnce.Do(func() {
		// CoreGraphics first (ns.Framework loads Foundation before it):
		// without it a process that is not an app gets no device from
		// MTLCreateSystemDefaultDevice.
		if _, err := ns.Framework("CoreGraphics"); err != nil {
			loadErr = fmt.Errorf("metal: %w", err)
			return
		}
		lib, err := ns.Framework("Metal")
		if err != nil {
			loadErr = fmt.Errorf("metal: %w", err)
			return
		}
		purego.RegisterLibFunc(&createSystemDefaultDevice, lib, "MTLCreateSystemDefaultDevice")
		objcLib, err := purego.Dlopen("/usr/lib/libobjc.A.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = fmt.Errorf("metal: loading libobjc: %w", err)
			return
		}
		send, err := purego.Dlsym(objcLib, "objc_msgSend")
		if err != nil {
			loadErr = fmt.Errorf("metal: %w", err)
			return
		}
		msgSend = send
		for _, f := range []any{&msgDispatch, &msgSignal, &msgWaitEvent, &msgSignaled, &msgU64, &msgBool, &msgBoolArg,
			&msgF64, &msgPtr, &msgStr, &msgID, &msgIDArg, &msgVoid, &msgVoidU64, &msgNewBuffer, &msgNoCopy,
			&msgNewLibrary, &msgNewFunction, &msgNewPipeline, &msgSetConstant, &msgEncoderOfCB,
			&msgResponds, &msgFunctionName} {
			purego.RegisterFunc(f, send)
		}
		r := objc.RegisterName
		sel.init, sel.new, sel.release, sel.retain = r("init"), r("new"), r("release"), r("retain")
		sel.name, sel.supportsFamily, sel.workingSet = r("name"), r("supportsFamily:"), r("recommendedMaxWorkingSetSize")
		sel.unified, sel.maxBufferLength = r("hasUnifiedMemory"), r("maxBufferLength")
		sel.newCommandQueue, sel.newSharedEvent, sel.commandBuffer = r("newCommandQueue"), r("newSharedEvent"), r("commandBuffer")
		sel.encoder = r("computeCommandEncoderWithDispatchType:")
		sel.newLibrary = r("newLibraryWithSource:options:error:")
		sel.newFunction, sel.newFunctionConst = r("newFunctionWithName:"), r("newFunctionWithName:constantValues:error:")
		sel.newPipeline = r("newComputePipelineStateWithFunction:error:")
		sel.maxThreads, sel.execWidth = r("maxTotalThreadsPerThreadgroup"), r("threadExecutionWidth")
		sel.newBuffer, sel.newBufferNoCopy = r("newBufferWithLength:options:"), r("newBufferWithBytesNoCopy:length:options:deallocator:")
		sel.contents = r("contents")
		sel.setPipeline, sel.setBuffer, sel.setOffset = r("setComputePipelineState:"), r("setBuffer:offset:atIndex:"), r("setBufferOffset:atIndex:")
		sel.setBytes, sel.setTGMem = r("setBytes:length:atIndex:"), r("setThreadgroupMemoryLength:atIndex:")
		sel.setBuffers, sel.maxTGMem = r("setBuffers:offsets:withRange:"), r("maxThreadgroupMemoryLength")
		sel.dispatch, sel.barrier = r("dispatchThreadgroups:threadsPerThreadgroup:"), r("memoryBarrierWithScope:")
		sel.endEncoding, sel.signal, sel.commit = r("endEncoding"), r("encodeSignalEvent:value:"), r("commit")
		sel.waitUntilCompleted, sel.status, sel.errorSel = r("waitUntilCompleted"), r("status"), r("error")
		sel.utf8 = r("UTF8String")
		sel.gpuStart, sel.gpuEnd = r("GPUStartTime"), r("GPUEndTime")
		sel.waitSignaled, sel.signaledValue = r("waitUntilSignaledValue:timeoutMS:"), r("signaledValue")
		sel.setConstant = r("setConstantValue:type:atIndex:")
		sel.setFastMath, sel.setMathMode, sel.responds = r("setFastMathEnabled:"), r("setMathMode:"), r("respondsToSelector:")
		sel.languageVersion = r("languageVersion")
	})
	return loadErr
}

// pool runs f inside an autorelease pool on one OS thread (ns.WithPool),
// so the autoreleased objects Metal returns (command buffers, encoders,
// strings, errors) are freed when f returns.
func pool(f func()) { ns.WithPool(f) }

// nsError turns an NSError into a Go error with Metal's message.
func nsError(what string, e objc.ID) error {
	if e == 0 {
		return errors.New("metal: " + what + ": failed without an error")
	}
	return fmt.Errorf("metal: %s: %w", what, ns.NSError(e))
}

// nsString makes an NSString (owned: release it) from Go text.
func nsString(s string) objc.ID { return ns.NewString(s) }

// mtlDevice is the system's default GPU with its queue, shader library and
// shared event: one per process, created on first use.
type mtlDevice struct {
	dev, queue, lib, event objc.ID
	in                     Info
	mu                     sync.Mutex
	pipes                  map[string]pipeline
	nextValue              uint64
}

var (
	sysOnce sync.Once
	sysDev  *mtlDevice
	sysErr  error
)

func systemDevice() (*mtlDevice, error) {
	sysOnce.Do(func() { sysDev, sysErr = openSystemDevice() })
	return sysDev, sysErr
}

func openSystemDevice() (*mtlDevice, error) {
	if err := loadMetal(); err != nil {
		return nil, err
	}
	d := &mtlDevice{pipes: map[string]pipeline{}}
	var err error
	pool(func() {
		d.dev = createSystemDefaultDevice()
		if d.dev == 0 {
			err = errors.New("metal: MTLCreateSystemDefaultDevice returned no device")
			return
		}
		d.in = Info{
			Name:                 msgStr(msgID(d.dev, sel.name), sel.utf8),
			WorkingSet:           msgU64(d.dev, sel.workingSet),
			MaxBuffer:            msgU64(d.dev, sel.maxBufferLength),
			Unified:              msgBool(d.dev, sel.unified),
			MaxThreadgroupMemory: uint32(msgU64(d.dev, sel.maxTGMem)),
			PageSize:             os.Getpagesize(),
			Family:               "default",
		}
		for _, f := range []struct {
			id   uint64
			name string
		}{{familyApple9, "apple9"}, {familyApple8, "apple8"}, {familyApple7, "apple7"}, {familyMac2, "mac2"}} {
			if msgBoolArg(d.dev, sel.supportsFamily, f.id) {
				d.in.Family = f.name
				break
			}
		}
		// a new MTLCompileOptions holds the newest language the OS
		// compiles, the one compileLibrary uses
		opts := msgID(objc.ID(objc.GetClass("MTLCompileOptions")), sel.new)
		d.in.DeviceFence = msgU64(opts, sel.languageVersion) >= mtlLanguageVersion3_2
		msgVoid(opts, sel.release)
		d.queue = msgID(d.dev, sel.newCommandQueue)
		d.event = msgID(d.dev, sel.newSharedEvent)
		if d.queue == 0 || d.event == 0 {
			err = errors.New("metal: the device gave no command queue or shared event")
			return
		}
		err = d.compileLibrary()
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// compileLibrary compiles shaders.Source() once. Math mode Relaxed where
// the OS has it (fast math that keeps Inf and NaN, which the masks and
// the sampler's NaN rule need); otherwise fast math stays off, since the
// older switch also assumes there are no Inf or NaN.
func (d *mtlDevice) compileLibrary() error {
	opts := msgID(objc.ID(objc.GetClass("MTLCompileOptions")), sel.new)
	defer msgVoid(opts, sel.release)
	if msgResponds(opts, sel.responds, sel.setMathMode) {
		msgVoidU64(opts, sel.setMathMode, mathModeRelaxed)
	} else {
		msgVoidU64(opts, sel.setFastMath, 0)
	}
	src := nsString(shaders.Source())
	defer msgVoid(src, sel.release)
	var nserr objc.ID
	d.lib = msgNewLibrary(d.dev, sel.newLibrary, src, opts, &nserr)
	if d.lib == 0 {
		return nsError("compiling the shader library", nserr)
	}
	return nil
}

func (d *mtlDevice) info() Info { return d.in }

func (d *mtlDevice) newBuffer(size int64, mode storage) (buffer, error) {
	opts := uint64(resourceStorageShared)
	if mode == private {
		opts = resourceStoragePrivate
	}
	if size <= 0 || uint64(size) > d.in.MaxBuffer {
		return buffer{}, fmt.Errorf("metal: buffer of %d bytes (the device allows %d)", size, d.in.MaxBuffer)
	}
	b := msgNewBuffer(d.dev, sel.newBuffer, uint64(size), opts)
	if b == 0 {
		return buffer{}, fmt.Errorf("metal: the device could not allocate %d bytes", size)
	}
	out := buffer{h: handle(b), size: size}
	if mode == shared {
		out.mem = unsafe.Slice((*byte)(msgPtr(b, sel.contents)), size)
	}
	return out, nil
}

func (d *mtlDevice) wrap(mem []byte) (buffer, error) {
	if len(mem) == 0 {
		return buffer{}, errors.New("metal: wrapping no memory")
	}
	b := msgNoCopy(d.dev, sel.newBufferNoCopy, unsafe.Pointer(unsafe.SliceData(mem)), uint64(len(mem)), resourceStorageShared, 0)
	if b == 0 {
		return buffer{}, fmt.Errorf("metal: newBufferWithBytesNoCopy refused %d bytes (page-aligned memory map expected)", len(mem))
	}
	return buffer{h: handle(b), size: int64(len(mem)), mem: mem}, nil
}

func (d *mtlDevice) release(b buffer) {
	if b.h != 0 {
		msgVoid(objc.ID(b.h), sel.release)
	}
}

func (d *mtlDevice) pipeline(fn string, consts []shaders.Constant) (pipeline, error) {
	key := fmt.Sprint(fn, consts)
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pipes[key]; ok {
		return p, nil
	}
	var p pipeline
	var err error
	pool(func() {
		name := nsString(fn)
		defer msgVoid(name, sel.release)
		var f objc.ID
		var nserr objc.ID
		if len(consts) == 0 {
			f = msgFunctionName(d.lib, sel.newFunction, name)
			if f == 0 {
				err = fmt.Errorf("metal: function %s is not in the shader library", fn)
				return
			}
		} else {
			values := msgID(objc.ID(objc.GetClass("MTLFunctionConstantValues")), sel.new)
			defer msgVoid(values, sel.release)
			for _, c := range consts {
				v := c.Value
				msgSetConstant(values, sel.setConstant, unsafe.Pointer(&v), dataTypeUInt, uint64(c.Index))
			}
			f = msgNewFunction(d.lib, sel.newFunctionConst, name, values, &nserr)
			if f == 0 {
				err = nsError("specialising "+fn, nserr)
				return
			}
		}
		defer msgVoid(f, sel.release)
		nserr = 0
		pso := msgNewPipeline(d.dev, sel.newPipeline, f, &nserr)
		if pso == 0 {
			err = nsError("pipeline of "+fn, nserr)
			return
		}
		p = pipeline{h: handle(pso), maxThreads: uint32(msgU64(pso, sel.maxThreads)), execWidth: uint32(msgU64(pso, sel.execWidth))}
	})
	if err != nil {
		return pipeline{}, err
	}
	d.pipes[key] = p
	return p, nil
}

// close keeps the device: it lives for the process, like its library.
func (d *mtlDevice) close() {}

func (d *mtlDevice) commandBuffer() (cmdBuffer, error) {
	c := &mtlCB{d: d}
	pool(func() {
		// Both are autoreleased: retain them past the pool.
		c.cb = msgID(d.queue, sel.commandBuffer)
		if c.cb == 0 {
			return
		}
		msgID(c.cb, sel.retain)
		c.enc = msgEncoderOfCB(c.cb, sel.encoder, dispatchConcurrent)
		if c.enc != 0 {
			msgID(c.enc, sel.retain)
		}
	})
	if c.cb == 0 || c.enc == 0 {
		c.release()
		return nil, errors.New("metal: the queue gave no command buffer or compute encoder")
	}
	return c, nil
}

// mtlCB is a command buffer with its compute encoder.
type mtlCB struct {
	d       *mtlDevice
	cb, enc objc.ID
	value   uint64
	ended   bool
	groups  mtlSize // dispatch's arguments, passed by address on arm64
	threads mtlSize
}

func (c *mtlCB) encoder() encoder { return c }

func (c *mtlCB) endEncoding() {
	if !c.ended && c.enc != 0 {
		msgVoid(c.enc, sel.endEncoding)
		c.ended = true
	}
}

func (c *mtlCB) commit() uint64 {
	c.endEncoding()
	c.d.mu.Lock()
	c.d.nextValue++
	c.value = c.d.nextValue
	c.d.mu.Unlock()
	msgSignal(c.cb, sel.signal, c.d.event, c.value)
	msgVoid(c.cb, sel.commit)
	return c.value
}

// abort drops a command buffer that was never committed.
func (c *mtlCB) abort() {
	c.endEncoding()
	c.release()
}

// wait blocks on the shared event (signalled right after the chunk's last
// dispatch), in slices so a command buffer that failed, and so never
// signals, is noticed; then collects the status and error.
func (c *mtlCB) wait() error {
	ev := c.d.event
	canWait := msgResponds(ev, sel.responds, sel.waitSignaled)
	for msgSignaled(ev, sel.signaledValue) < c.value {
		if st := msgU64(c.cb, sel.status); st >= cmdStatusCompleted {
			break
		}
		if canWait {
			msgWaitEvent(ev, sel.waitSignaled, c.value, 100)
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
	msgVoid(c.cb, sel.waitUntilCompleted)
	var err error
	if msgU64(c.cb, sel.status) == cmdStatusError {
		pool(func() { err = nsError("command buffer", msgID(c.cb, sel.errorSel)) })
	}
	return err
}

func (c *mtlCB) gpuTime() (float64, float64) {
	return msgF64(c.cb, sel.gpuStart), msgF64(c.cb, sel.gpuEnd)
}

func (c *mtlCB) release() {
	if c.enc != 0 {
		msgVoid(c.enc, sel.release)
		c.enc = 0
	}
	if c.cb != 0 {
		msgVoid(c.cb, sel.release)
		c.cb = 0
	}
}

// The compute encoder's messages (mtlCB is its own encoder; its heap
// fields hold what is passed by address, which a goroutine stack could
// move).

func (c *mtlCB) setPipeline(p handle) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setPipeline), uintptr(p))
}
func (c *mtlCB) setBuffer(b handle, off uint64, index int) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setBuffer), uintptr(b), uintptr(off), uintptr(index))
}

// setBuffers passes the arrays by address and the NSRange in two
// registers (a 16-byte struct of integers, on arm64 and amd64 alike).
func (c *mtlCB) setBuffers(bufs []handle, offs []uint64, start int) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setBuffers), uintptr(unsafe.Pointer(unsafe.SliceData(bufs))),
		uintptr(unsafe.Pointer(unsafe.SliceData(offs))), uintptr(start), uintptr(len(bufs)))
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(offs)
}

func (c *mtlCB) setBufferOffset(off uint64, index int) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setOffset), uintptr(off), uintptr(index))
}

// setBytes copies the Args block into the command stream (Metal copies
// it during the call, so a may change afterwards; a is heap memory of the
// executable).
func (c *mtlCB) setBytes(a *[shaders.ArgsSize]byte, index int) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setBytes), uintptr(unsafe.Pointer(a)), shaders.ArgsSize, uintptr(index))
	runtime.KeepAlive(a)
}
func (c *mtlCB) setThreadgroupMemory(n uint32, index int) {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.setTGMem), uintptr(n), uintptr(index))
}
func (c *mtlCB) barrier() {
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.barrier), barrierScopeBuffer)
}

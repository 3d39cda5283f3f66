package systemaudio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"

	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/internal/ns"
)

// Core Audio's constants (AudioHardware.h, AudioHardwareTapping.h): the
// property selectors and scope are four-character codes.
const (
	systemObject         = 1          // kAudioObjectSystemObject
	scopeGlobal          = 0x676c6f62 // 'glob'
	elementMain          = 0
	propDefaultOutput    = 0x644f7574 // 'dOut' kAudioHardwarePropertyDefaultOutputDevice
	propDeviceUID        = 0x75696420 // 'uid ' kAudioDevicePropertyDeviceUID
	propTapFormat        = 0x74666d74 // 'tfmt' kAudioTapPropertyFormat
	formatLinearPCM      = 0x6c70636d // 'lpcm'
	formatIsFloat        = 1 << 0
	formatNonInterleaved = 1 << 5
	// mixCap bounds one callback's mono mix (samples): the buffer is made
	// once, so the audio thread does not allocate.
	mixCap = 1 << 15
)

// propertyAddress is AudioObjectPropertyAddress.
type propertyAddress struct{ selector, scope, element uint32 }

// streamFormat is AudioStreamBasicDescription.
type streamFormat struct {
	sampleRate                                       float64
	formatID, formatFlags, bytesPerPacket            uint32
	framesPerPacket, bytesPerFrame, channelsPerFrame uint32
	bitsPerChannel, reserved                         uint32
}

// audioBuffer and bufferList are AudioBuffer and AudioBufferList (its
// buffers read up to the count it holds).
type audioBuffer struct {
	channels, size uint32
	data           unsafe.Pointer
}

type bufferList struct {
	n    uint32
	_    uint32
	bufs [64]audioBuffer
}

var (
	selAlloc       = objc.RegisterName("alloc")
	selInitGlobal  = objc.RegisterName("initStereoGlobalTapButExcludeProcesses:") // -[CATapDescription initStereoGlobalTapButExcludeProcesses:(NSArray<NSNumber*>*)]
	selSetPrivate  = objc.RegisterName("setPrivateTap:")                          // -[CATapDescription setPrivateTap:(BOOL)]
	selSetName     = objc.RegisterName("setName:")                                // -[CATapDescription setName:(NSString*)]
	selUUID        = objc.RegisterName("UUID")                                    // -[CATapDescription UUID] -> NSUUID*
	selUUIDString  = objc.RegisterName("UUIDString")                              // -[NSUUID UUIDString] -> NSString*
	selArray       = objc.RegisterName("array")                                   // +[NS(Mutable)Array array]
	selAddObject   = objc.RegisterName("addObject:")                              // -[NSMutableArray addObject:]
	selDictionary  = objc.RegisterName("dictionary")                              // +[NSMutableDictionary dictionary]
	selSetObject   = objc.RegisterName("setObject:forKey:")                       // -[NSMutableDictionary setObject:forKey:]
	selNumberInt   = objc.RegisterName("numberWithInt:")                          // +[NSNumber numberWithInt:]
	selRelease     = objc.RegisterName("release")
	loadOnce       sync.Once
	loadErr        error
	createTap      func(desc objc.ID, tap *uint32) int32
	destroyTap     func(tap uint32) int32
	createDevice   func(desc objc.ID, dev *uint32) int32
	destroyDevice  func(dev uint32) int32
	getProperty    func(obj uint32, addr *propertyAddress, qualSize uint32, qual unsafe.Pointer, size *uint32, data unsafe.Pointer) int32
	createIOProcID func(dev uint32, proc, client uintptr, id *uintptr) int32
	destroyIOProc  func(dev uint32, id uintptr) int32
	deviceStart    func(dev uint32, id uintptr) int32
	deviceStop     func(dev uint32, id uintptr) int32
	ioProc         uintptr  // the one IOProc (purego callbacks are never freed); client data picks the tap
	taps           sync.Map // client key -> *Tap
	nextKey        atomic.Uintptr
)

func load() error {
	loadOnce.Do(func() {
		lib, err := ns.Framework("CoreAudio")
		if err != nil {
			loadErr = err
			return
		}
		if _, err := ns.Class("CATapDescription"); err != nil {
			loadErr = ErrUnsupported
			return
		}
		if err := ns.Funcs(
			ns.Sym{Lib: lib, Fn: &createTap, Name: "AudioHardwareCreateProcessTap"},
			ns.Sym{Lib: lib, Fn: &destroyTap, Name: "AudioHardwareDestroyProcessTap"},
			ns.Sym{Lib: lib, Fn: &createDevice, Name: "AudioHardwareCreateAggregateDevice"},
			ns.Sym{Lib: lib, Fn: &destroyDevice, Name: "AudioHardwareDestroyAggregateDevice"},
			ns.Sym{Lib: lib, Fn: &getProperty, Name: "AudioObjectGetPropertyData"},
			ns.Sym{Lib: lib, Fn: &createIOProcID, Name: "AudioDeviceCreateIOProcID"},
			ns.Sym{Lib: lib, Fn: &destroyIOProc, Name: "AudioDeviceDestroyIOProcID"},
			ns.Sym{Lib: lib, Fn: &deviceStart, Name: "AudioDeviceStart"},
			ns.Sym{Lib: lib, Fn: &deviceStop, Name: "AudioDeviceStop"},
		); err != nil {
			loadErr = fmt.Errorf("%w (%v)", ErrUnsupported, err)
			return
		}
		// AudioDeviceIOProc: (device, now, inputData, inputTime, outputData,
		// outputTime, clientData) -> OSStatus, on Core Audio's thread.
		ioProc = purego.NewCallback(func(_, _, input, _, _, _, client uintptr) uintptr {
			if t, ok := taps.Load(client); ok {
				t.(*Tap).onInput(input)
			}
			return 0
		})
	})
	return loadErr
}

// osErr describes a failed Core Audio call (OSStatus, often four letters).
func osErr(what string, st int32) error {
	if st == 0 {
		return nil
	}
	b := []byte{byte(uint32(st) >> 24), byte(uint32(st) >> 16), byte(uint32(st) >> 8), byte(uint32(st))}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Errorf("systemaudio: %s: OSStatus %d", what, st)
		}
	}
	return fmt.Errorf("systemaudio: %s: OSStatus '%s'", what, b)
}

// Tap is the system audio as a capture device (capture.Options: OnData
// gets 16-kHz mono periods, from the delivery goroutine).
type Tap struct {
	opts     capture.Options
	key      uintptr
	tap, dev uint32
	proc     uintptr
	rate     int
	channels int // of an interleaved buffer
	mix      []float32

	mu      sync.Mutex
	p       *pipe
	done    chan error
	started bool
}

// Open creates the process tap and its aggregate device (the user is
// asked once for permission to record the system audio: the app's
// Info.plist says why, NSAudioCaptureUsageDescription).
func Open(o capture.Options) (*Tap, error) {
	if err := load(); err != nil {
		return nil, err
	}
	t := &Tap{opts: o, key: nextKey.Add(1), mix: make([]float32, 0, mixCap)}
	var err error
	ns.WithPool(func() { err = t.create() })
	if err != nil {
		t.destroy()
		return nil, err
	}
	taps.Store(t.key, t)
	return t, nil
}

func (t *Tap) create() error {
	cls, err := ns.Class("CATapDescription")
	if err != nil {
		return err
	}
	none := objc.ID(objc.GetClass("NSArray")).Send(selArray)
	desc := cls.Send(selAlloc).Send(selInitGlobal, none)
	if desc == 0 {
		return ErrUnsupported
	}
	defer desc.Send(selRelease)
	desc.Send(selSetPrivate, true)
	desc.Send(selSetName, ns.String("Hark meeting"))
	tapUID := ns.GoString(desc.Send(selUUID).Send(selUUIDString))
	if err := osErr("creating the process tap", createTap(desc, &t.tap)); err != nil {
		return err
	}
	var f streamFormat
	size := uint32(unsafe.Sizeof(f))
	addr := propertyAddress{propTapFormat, scopeGlobal, elementMain}
	if err := osErr("reading the tap's format", getProperty(t.tap, &addr, 0, nil, &size, unsafe.Pointer(&f))); err != nil {
		return err
	}
	if f.formatID != formatLinearPCM || f.formatFlags&formatIsFloat == 0 || f.bitsPerChannel != 32 || f.sampleRate < 8000 {
		return fmt.Errorf("systemaudio: the tap delivers an unexpected format (%+v)", f)
	}
	t.rate, t.channels = int(f.sampleRate), int(f.channelsPerFrame)
	if f.formatFlags&formatNonInterleaved != 0 {
		t.channels = 1 // one buffer a channel
	}
	outUID, err := defaultOutputUID()
	if err != nil {
		return err
	}
	dict := func() objc.ID { return objc.ID(objc.GetClass("NSMutableDictionary")).Send(selDictionary) }
	set := func(d objc.ID, key string, v objc.ID) { d.Send(selSetObject, v, ns.String(key)) }
	num := func(v int32) objc.ID { return objc.ID(objc.GetClass("NSNumber")).Send(selNumberInt, v) }
	list := func(items ...objc.ID) objc.ID {
		a := objc.ID(objc.GetClass("NSMutableArray")).Send(selArray)
		for _, it := range items {
			a.Send(selAddObject, it)
		}
		return a
	}
	// The aggregate device: the default output as its clock, the tap as
	// its input (kAudioAggregateDevice*Key, kAudioSubTap*Key).
	sub, tapEntry, agg := dict(), dict(), dict()
	set(sub, "uid", ns.String(outUID))
	set(tapEntry, "uid", ns.String(tapUID))
	set(tapEntry, "drift", num(1))
	set(agg, "name", ns.String("Hark meeting"))
	set(agg, "uid", ns.String("hark-meeting-"+tapUID))
	set(agg, "master", ns.String(outUID))
	set(agg, "private", num(1))
	set(agg, "stacked", num(0))
	set(agg, "tapautostart", num(1))
	set(agg, "subdevices", list(sub))
	set(agg, "taps", list(tapEntry))
	if err := osErr("creating the aggregate device", createDevice(agg, &t.dev)); err != nil {
		return err
	}
	return osErr("adding the input callback", createIOProcID(t.dev, ioProc, t.key, &t.proc))
}

// defaultOutputUID is the default output device's UID.
func defaultOutputUID() (string, error) {
	var dev uint32
	size := uint32(unsafe.Sizeof(dev))
	addr := propertyAddress{propDefaultOutput, scopeGlobal, elementMain}
	if err := osErr("finding the default output", getProperty(systemObject, &addr, 0, nil, &size, unsafe.Pointer(&dev))); err != nil {
		return "", err
	}
	var uid objc.ID // a CFStringRef the caller releases
	size = uint32(unsafe.Sizeof(uid))
	addr = propertyAddress{propDeviceUID, scopeGlobal, elementMain}
	if err := osErr("reading the output's UID", getProperty(dev, &addr, 0, nil, &size, unsafe.Pointer(&uid))); err != nil {
		return "", err
	}
	defer ns.Release(uid)
	return ns.GoString(uid), nil
}

// onInput runs on Core Audio's thread: the tap's audio, mixed down, goes
// to the pipe (which never waits).
func (t *Tap) onInput(input uintptr) {
	if input == 0 {
		return
	}
	bl := *(**bufferList)(unsafe.Pointer(&input)) // a C address, never Go memory
	n := min(int(bl.n), len(bl.bufs))
	var bufs [len(bufferList{}.bufs)][]float32
	for i := range n {
		b := bl.bufs[i]
		if b.data != nil {
			bufs[i] = unsafe.Slice((*float32)(b.data), b.size/4)
		}
	}
	ch := t.channels
	if n == 1 && int(bl.bufs[0].channels) > 0 {
		ch = int(bl.bufs[0].channels)
	}
	t.mix = mixDown(t.mix[:0], bufs[:n], ch)
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p != nil {
		p.push(t.mix)
	}
}

// Start starts the device; OnData gets the audio from now on.
func (t *Tap) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return nil
	}
	period := Rate * max(t.opts.PeriodMs, 10) / 1000
	t.p, t.done = newPipe(t.rate, 2*t.rate), make(chan error, 1)
	p, done, onData := t.p, t.done, t.opts.OnData
	go func() { done <- deliver(p, period, onData) }()
	if err := osErr("starting the aggregate device", deviceStart(t.dev, t.proc)); err != nil {
		t.p.close()
		if derr := <-t.done; derr != nil {
			err = errors.Join(err, derr)
		}
		t.p = nil
		return err
	}
	t.started = true
	return nil
}

// Stop stops the device and hands on what it had delivered.
func (t *Tap) Stop() error {
	t.mu.Lock()
	if !t.started {
		t.mu.Unlock()
		return nil
	}
	t.started = false
	p, done := t.p, t.done
	t.mu.Unlock()
	err := osErr("stopping the aggregate device", deviceStop(t.dev, t.proc))
	t.mu.Lock()
	t.p = nil
	t.mu.Unlock()
	p.close()
	if derr := <-done; err == nil {
		err = derr
	}
	return err
}

// Close stops the device and removes it and the tap.
func (t *Tap) Close() error {
	err := t.Stop()
	taps.Delete(t.key)
	t.destroy()
	return err
}

func (t *Tap) destroy() {
	if t.proc != 0 {
		destroyIOProc(t.dev, t.proc)
		t.proc = 0
	}
	if t.dev != 0 {
		destroyDevice(t.dev)
		t.dev = 0
	}
	if t.tap != 0 {
		destroyTap(t.tap)
		t.tap = 0
	}
}

package eventtap

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/harkapp/hark/internal/ns"
)

// CGEventTapLocation, placement, options and fields (CGEventTypes.h).
const (
	sessionEventTap      = 1 // kCGSessionEventTap
	headInsertEventTap   = 0 // kCGHeadInsertEventTap
	tapOptionListenOnly  = 1 // kCGEventTapOptionListenOnly
	fieldMouseButton     = 3 // kCGMouseEventButtonNumber
	fieldKeyboardRepeat  = 8 // kCGKeyboardEventAutorepeat
	fieldKeyboardKeycode = 9 // kCGKeyboardEventKeycode
	runLoopRunFinished   = 1 // kCFRunLoopRunFinished
	// The run loop wakes this often to see whether Close was called (a
	// CFRunLoopStop sent before the loop runs would be lost).
	runLoopSlice = 0.25
)

var (
	// CFMachPortRef CGEventTapCreate(CGEventTapLocation, CGEventTapPlacement,
	//     CGEventTapOptions, CGEventMask, CGEventTapCallBack, void *userInfo);
	cgEventTapCreate func(tap, place, options uint32, mask uint64, callback, user uintptr) uintptr
	// void CGEventTapEnable(CFMachPortRef, bool);
	cgEventTapEnable func(tap uintptr, enable bool)
	// int64_t CGEventGetIntegerValueField(CGEventRef, CGEventField);
	cgEventGetIntegerValueField func(event uintptr, field uint32) int64
	// CGEventFlags CGEventGetFlags(CGEventRef);
	cgEventGetFlags func(event uintptr) uint64
	// CFRunLoopSourceRef CFMachPortCreateRunLoopSource(CFAllocatorRef, CFMachPortRef, CFIndex);
	cfMachPortCreateRunLoopSource func(alloc, port uintptr, order int) uintptr
	cfMachPortInvalidate          func(port uintptr)
	cfRunLoopGetCurrent           func() uintptr
	cfRunLoopAddSource            func(rl, source, mode uintptr)
	// SInt32 CFRunLoopRunInMode(CFRunLoopMode, CFTimeInterval, Boolean);
	cfRunLoopRunInMode func(mode uintptr, seconds float64, returnAfterSource bool) int32
	cfRunLoopStop      func(rl uintptr)
	cfRelease          func(ref uintptr)
	defaultMode        uintptr // kCFRunLoopDefaultMode

	bindOnce sync.Once
	bindErr  error
	callback uintptr // the CGEventTapCallBack, made once (purego callbacks are never freed)

	// current is the running tap the callback reports to.
	currentMu sync.Mutex
	current   *Tap
)

func bind() error {
	bindOnce.Do(func() {
		cg, err := ns.Framework("CoreGraphics")
		if err != nil {
			bindErr = err
			return
		}
		cf, err := ns.Framework("CoreFoundation")
		if err != nil {
			bindErr = err
			return
		}
		if bindErr = ns.Funcs(
			ns.Sym{Lib: cg, Fn: &cgEventTapCreate, Name: "CGEventTapCreate"},
			ns.Sym{Lib: cg, Fn: &cgEventTapEnable, Name: "CGEventTapEnable"},
			ns.Sym{Lib: cg, Fn: &cgEventGetIntegerValueField, Name: "CGEventGetIntegerValueField"},
			ns.Sym{Lib: cg, Fn: &cgEventGetFlags, Name: "CGEventGetFlags"},
			ns.Sym{Lib: cf, Fn: &cfMachPortCreateRunLoopSource, Name: "CFMachPortCreateRunLoopSource"},
			ns.Sym{Lib: cf, Fn: &cfMachPortInvalidate, Name: "CFMachPortInvalidate"},
			ns.Sym{Lib: cf, Fn: &cfRunLoopGetCurrent, Name: "CFRunLoopGetCurrent"},
			ns.Sym{Lib: cf, Fn: &cfRunLoopAddSource, Name: "CFRunLoopAddSource"},
			ns.Sym{Lib: cf, Fn: &cfRunLoopRunInMode, Name: "CFRunLoopRunInMode"},
			ns.Sym{Lib: cf, Fn: &cfRunLoopStop, Name: "CFRunLoopStop"},
			ns.Sym{Lib: cf, Fn: &cfRelease, Name: "CFRelease"},
		); bindErr != nil {
			return
		}
		mode, err := ns.Global(cf, "kCFRunLoopDefaultMode")
		if err != nil {
			bindErr = err
			return
		}
		defaultMode = uintptr(mode)
		// CGEventRef callback(CGEventTapProxy, CGEventType, CGEventRef, void *userInfo).
		// A listen-only tap's return value is ignored; the event is
		// returned unchanged all the same.
		callback = purego.NewCallback(func(proxy, typ, event, user uintptr) uintptr {
			currentMu.Lock()
			t := current
			currentMu.Unlock()
			if t != nil {
				t.handle(uint32(typ), event)
			}
			return event
		})
	})
	return bindErr
}

// ErrNotAllowed is returned by Start when macOS refuses the tap: the
// Input Monitoring permission is missing (macos/permissions asks for it).
var ErrNotAllowed = errors.New("eventtap: macOS refused the event tap (Input Monitoring is not allowed)")

// Tap is a running listen-only event tap. One runs at a time: Start
// stops the previous one.
type Tap struct {
	key  Key
	feed func(Result)

	port   uintptr
	rl     uintptr
	mu     sync.Mutex
	closed bool
	done   chan struct{}
}

// Start creates a listen-only tap for k on its own thread and run loop,
// calling feed (on that thread: it must return at once) with every
// result other than Ignore.
func Start(k Key, feed func(Result)) (*Tap, error) {
	if feed == nil {
		return nil, errors.New("eventtap: nil feed")
	}
	if err := bind(); err != nil {
		return nil, err
	}
	currentMu.Lock()
	prev := current
	currentMu.Unlock()
	if prev != nil {
		prev.Close()
	}
	t := &Tap{key: k, feed: feed, done: make(chan struct{})}
	started := make(chan error, 1)
	go t.run(started)
	if err := <-started; err != nil {
		return nil, err
	}
	return t, nil
}

// run owns the tap's thread: the run loop a tap is added to must be run
// by the thread it belongs to.
func (t *Tap) run(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(t.done)
	port := cgEventTapCreate(sessionEventTap, headInsertEventTap, tapOptionListenOnly, Mask(), callback, 0)
	if port == 0 {
		started <- ErrNotAllowed
		return
	}
	src := cfMachPortCreateRunLoopSource(0, port, 0)
	if src == 0 {
		cfMachPortInvalidate(port)
		cfRelease(port)
		started <- fmt.Errorf("eventtap: CFMachPortCreateRunLoopSource failed")
		return
	}
	rl := cfRunLoopGetCurrent()
	cfRunLoopAddSource(rl, src, defaultMode)
	t.mu.Lock()
	t.port, t.rl = port, rl
	t.mu.Unlock()
	currentMu.Lock()
	current = t
	currentMu.Unlock()
	cgEventTapEnable(port, true)
	started <- nil
	for {
		r := cfRunLoopRunInMode(defaultMode, runLoopSlice, false)
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed || r == runLoopRunFinished {
			break
		}
	}
	currentMu.Lock()
	if current == t {
		current = nil
	}
	currentMu.Unlock()
	cgEventTapEnable(port, false)
	cfMachPortInvalidate(port)
	cfRelease(src)
	cfRelease(port)
}

// handle runs on the tap's thread for every event.
func (t *Tap) handle(typ uint32, event uintptr) {
	if typ == TypeTapDisabledByTimeout || typ == TypeTapDisabledByUserInput {
		t.mu.Lock()
		port := t.port
		t.mu.Unlock()
		if port != 0 {
			cgEventTapEnable(port, true)
		}
		return
	}
	e := Event{Type: typ}
	switch typ {
	case TypeKeyDown, TypeKeyUp, TypeFlagsChanged:
		e.Keycode = cgEventGetIntegerValueField(event, fieldKeyboardKeycode)
		e.Repeat = cgEventGetIntegerValueField(event, fieldKeyboardRepeat) != 0
		e.Flags = cgEventGetFlags(event)
	case TypeOtherMouseDown, TypeOtherMouseUp:
		e.Button = cgEventGetIntegerValueField(event, fieldMouseButton)
	}
	if r := Decode(t.key, e); r != Ignore {
		t.feed(r)
	}
}

// Close stops the tap; feed is not called after it returns.
func (t *Tap) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		<-t.done
		return
	}
	t.closed = true
	rl := t.rl
	t.mu.Unlock()
	if rl != 0 {
		cfRunLoopStop(rl)
	}
	<-t.done
}

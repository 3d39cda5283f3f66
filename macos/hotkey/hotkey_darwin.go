package hotkey

import (
	"errors"
	"fmt"
	"structs"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/macos/mainthread"
)

// The Carbon constants of the event handler (see carbon.go).
var (
	hotKeySignature     = fourCC("Hark") // EventHotKeyID.signature: ours
	eventHotKeyPressed  = uint32(5)      // kEventHotKeyPressed
	eventHotKeyReleased = uint32(6)      // kEventHotKeyReleased
	eventNotHandledErr  = int32(-9874)   // eventNotHandledErr: let others see it
)

// EventHotKeyID: struct { OSType signature; UInt32 id; }, passed by value.
type eventHotKeyID struct {
	_         structs.HostLayout
	Signature uint32
	ID        uint32
}

// EventTypeSpec: struct { OSType eventClass; UInt32 eventKind; }.
type eventTypeSpec struct {
	_     structs.HostLayout
	Class uint32
	Kind  uint32
}

var (
	// EventTargetRef GetApplicationEventTarget(void);
	getApplicationEventTarget func() uintptr
	// OSStatus InstallEventHandler(EventTargetRef, EventHandlerUPP, ItemCount,
	//     const EventTypeSpec *, void *userData, EventHandlerRef *outRef);
	installEventHandler func(target, handler uintptr, n uint, list *eventTypeSpec, user uintptr, out *uintptr) int32
	// OSStatus RegisterEventHotKey(UInt32 keyCode, UInt32 modifiers, EventHotKeyID,
	//     EventTargetRef, OptionBits options, EventHotKeyRef *outRef);
	registerEventHotKey func(code, mods uint32, id eventHotKeyID, target uintptr, opts uint32, out *uintptr) int32
	// OSStatus UnregisterEventHotKey(EventHotKeyRef);
	unregisterEventHotKey func(ref uintptr) int32
	// OSStatus GetEventParameter(EventRef, EventParamName, EventParamType desired,
	//     EventParamType *outActualType, ByteCount bufSize, ByteCount *outActualSize, void *outData);
	getEventParameter func(event uintptr, name, typ uint32, actual *uint32, size uint, outSize *uint, out unsafe.Pointer) int32
	// UInt32 GetEventKind(EventRef);
	getEventKind func(event uintptr) uint32

	bindOnce sync.Once
	bindErr  error
	callback uintptr // the EventHandlerUPP

	installMu sync.Mutex
	handler   uintptr // EventHandlerRef, installed once for the app's lifetime

	// Kept in package memory: InstallEventHandler reads the list during the
	// call, but nothing is lost by keeping it alive for good.
	handledEvents = []eventTypeSpec{
		{Class: eventClassKeyboard, Kind: eventHotKeyPressed},
		{Class: eventClassKeyboard, Kind: eventHotKeyReleased},
	}
	events dispatcher
	nextID atomic.Uint32
)

// setup binds Carbon once, then installs one application-level handler
// for hotkey press and release events on the main thread, where Carbon
// delivers them. A failed install (say, the run loop was not running yet)
// is retried by the next Register.
func setup() error {
	bindOnce.Do(func() {
		lib, err := ns.Framework("Carbon")
		if err != nil {
			bindErr = err
			return
		}
		if bindErr = ns.Funcs(
			ns.Sym{Lib: lib, Fn: &getApplicationEventTarget, Name: "GetApplicationEventTarget"},
			ns.Sym{Lib: lib, Fn: &installEventHandler, Name: "InstallEventHandler"},
			ns.Sym{Lib: lib, Fn: &registerEventHotKey, Name: "RegisterEventHotKey"},
			ns.Sym{Lib: lib, Fn: &unregisterEventHotKey, Name: "UnregisterEventHotKey"},
			ns.Sym{Lib: lib, Fn: &getEventParameter, Name: "GetEventParameter"},
			ns.Sym{Lib: lib, Fn: &getEventKind, Name: "GetEventKind"},
		); bindErr != nil {
			return
		}
		// OSStatus handler(EventHandlerCallRef, EventRef, void *userData).
		// For Mach-O, an EventHandlerUPP is the plain function pointer
		// (NewEventHandlerUPP returns its argument).
		callback = purego.NewCallback(func(call, event, user uintptr) uintptr {
			var hk eventHotKeyID
			st := getEventParameter(event, paramDirectObject, typeEventHotKeyID, nil,
				uint(unsafe.Sizeof(hk)), nil, unsafe.Pointer(&hk))
			if st != 0 || hk.Signature != hotKeySignature {
				return uintptr(uint32(eventNotHandledErr))
			}
			kind := getEventKind(event)
			if kind != eventHotKeyPressed && kind != eventHotKeyReleased {
				return uintptr(uint32(eventNotHandledErr))
			}
			// Only bookkeeping here: the callbacks run on the dispatcher's
			// goroutine, so the main thread returns at once.
			if !events.event(hk.ID, kind == eventHotKeyPressed) {
				return uintptr(uint32(eventNotHandledErr))
			}
			return 0 // noErr
		})
	})
	if bindErr != nil {
		return bindErr
	}
	installMu.Lock()
	defer installMu.Unlock()
	if handler != 0 {
		return nil
	}
	var st int32
	var ref uintptr
	if err := mainthread.Sync(func() {
		st = installEventHandler(getApplicationEventTarget(), callback,
			uint(len(handledEvents)), &handledEvents[0], 0, &ref)
	}); err != nil {
		return fmt.Errorf("hotkey: %w", err)
	}
	if st != 0 {
		return fmt.Errorf("hotkey: InstallEventHandler failed (OSStatus %d)", st)
	}
	handler = ref
	return nil
}

// Hotkey is one registered global hotkey. The zero value is ready to use.
type Hotkey struct {
	mu  sync.Mutex
	ref uintptr // EventHotKeyRef
	id  uint32
}

// Register parses spec and registers it, replacing any previous combo of
// h. down runs on press; up (may be nil) on release. Callbacks run in order
// on a worker goroutine, never on the main thread.
func (h *Hotkey) Register(spec string, down, up func()) error {
	combo, err := Parse(spec)
	if err != nil {
		return err
	}
	if down == nil {
		return errors.New("hotkey: nil down callback")
	}
	if err := setup(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.unregisterLocked(); err != nil {
		return err
	}
	id := nextID.Add(1)
	events.add(id, down, up)
	var ref uintptr
	var st int32
	err = mainthread.Sync(func() {
		st = registerEventHotKey(combo.Key, combo.Modifiers,
			eventHotKeyID{Signature: hotKeySignature, ID: id}, getApplicationEventTarget(), 0, &ref)
	})
	if err == nil && st != 0 {
		err = registerError(combo, st)
	}
	if err != nil {
		events.remove(id)
		return err
	}
	h.ref, h.id = ref, id
	return nil
}

// Unregister removes the hotkey; a key still held gets its up callback.
func (h *Hotkey) Unregister() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unregisterLocked()
}

func (h *Hotkey) unregisterLocked() error {
	if h.ref == 0 {
		return nil
	}
	var st int32
	ref := h.ref
	if err := mainthread.Sync(func() { st = unregisterEventHotKey(ref) }); err != nil {
		// Not run (timeout): the combo is still registered, keep our ref.
		return fmt.Errorf("hotkey: %w", err)
	}
	events.remove(h.id)
	h.ref, h.id = 0, 0
	if st != 0 {
		return fmt.Errorf("hotkey: UnregisterEventHotKey failed (OSStatus %d)", st)
	}
	return nil
}

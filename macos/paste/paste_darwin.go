package paste

import (
	"fmt"
	"sync"
	"time"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/macos/permissions"
)

// maxUnicodeChunk is the most UTF-16 units one keyboard event carries:
// CGEventKeyboardSetUnicodeString silently truncates longer strings to 20
// (not in Apple's documentation, but widely observed).
const maxUnicodeChunk = 20

var (
	selGeneralPasteboard = objc.RegisterName("generalPasteboard")  // +[NSPasteboard generalPasteboard]
	selChangeCount       = objc.RegisterName("changeCount")        // -[NSPasteboard changeCount] -> NSInteger
	selPasteboardItems   = objc.RegisterName("pasteboardItems")    // -[NSPasteboard pasteboardItems] -> NSArray<NSPasteboardItem*>* (nullable)
	selClearContents     = objc.RegisterName("clearContents")      // -[NSPasteboard clearContents] -> NSInteger
	selWriteObjects      = objc.RegisterName("writeObjects:")      // -[NSPasteboard writeObjects:(NSArray<id<NSPasteboardWriting>>*)] -> BOOL
	selTypes             = objc.RegisterName("types")              // -[NSPasteboardItem types] -> NSArray<NSPasteboardType>*
	selDataForType       = objc.RegisterName("dataForType:")       // -[NSPasteboardItem dataForType:(NSPasteboardType)] -> NSData*
	selSetDataForType    = objc.RegisterName("setData:forType:")   // -[NSPasteboardItem setData:(NSData*) forType:(NSPasteboardType)] -> BOOL
	selSetStringForType  = objc.RegisterName("setString:forType:") // -[NSPasteboardItem setString:(NSString*) forType:(NSPasteboardType)] -> BOOL
	selArrayWithCapacity = objc.RegisterName("arrayWithCapacity:") // +[NSMutableArray arrayWithCapacity:(NSUInteger)]
	selAddObject         = objc.RegisterName("addObject:")         // -[NSMutableArray addObject:(id)]
	selAlloc             = objc.RegisterName("alloc")
	selInit              = objc.RegisterName("init")
)

const (
	keyV             = 0x09       // kVK_ANSI_V: Cmd-V goes by key position
	flagMaskCommand  = 0x00100000 // kCGEventFlagMaskCommand
	hidEventTap      = 0          // kCGHIDEventTap: as if typed on the keyboard
	stateHIDSystem   = 1          // kCGEventSourceStateHIDSystemState
	transientUTI     = "org.nspasteboard.TransientType"
	keystrokeSpacing = 2 * time.Millisecond
)

var (
	loadOnce sync.Once
	loadErr  error

	typeString objc.ID // NSPasteboardTypeString: extern NSPasteboardType const

	// CGEventSourceRef CGEventSourceCreate(CGEventSourceStateID stateID);
	cgEventSourceCreate func(state int32) uintptr
	// CGEventRef CGEventCreateKeyboardEvent(CGEventSourceRef, CGKeyCode, bool keyDown);
	cgEventCreateKeyboardEvent func(src uintptr, key uint16, down bool) uintptr
	// void CGEventSetFlags(CGEventRef, CGEventFlags);
	cgEventSetFlags func(ev uintptr, flags uint64)
	// void CGEventPost(CGEventTapLocation, CGEventRef);
	cgEventPost func(tap uint32, ev uintptr)
	// void CGEventKeyboardSetUnicodeString(CGEventRef, UniCharCount, const UniChar *);
	cgEventKeyboardSetUnicodeString func(ev uintptr, n uint, s *uint16)
	// void CFRelease(CFTypeRef);
	cfRelease func(ref uintptr)

	global = &paster{b: nsBoard{}, delay: RestoreDelay, keys: postPaste}
)

func load() error {
	loadOnce.Do(func() {
		appkit, err := ns.Framework("AppKit")
		if err != nil {
			loadErr = err
			return
		}
		if typeString, err = ns.Global(appkit, "NSPasteboardTypeString"); err != nil {
			loadErr = err
			return
		}
		cg, err := ns.Framework("CoreGraphics")
		if err != nil {
			loadErr = err
			return
		}
		cf, err := ns.Framework("CoreFoundation")
		if err != nil {
			loadErr = err
			return
		}
		loadErr = ns.Funcs(
			ns.Sym{Lib: cg, Fn: &cgEventSourceCreate, Name: "CGEventSourceCreate"},
			ns.Sym{Lib: cg, Fn: &cgEventCreateKeyboardEvent, Name: "CGEventCreateKeyboardEvent"},
			ns.Sym{Lib: cg, Fn: &cgEventSetFlags, Name: "CGEventSetFlags"},
			ns.Sym{Lib: cg, Fn: &cgEventPost, Name: "CGEventPost"},
			ns.Sym{Lib: cg, Fn: &cgEventKeyboardSetUnicodeString, Name: "CGEventKeyboardSetUnicodeString"},
			ns.Sym{Lib: cf, Fn: &cfRelease, Name: "CFRelease"},
		)
	})
	return loadErr
}

// Insert puts text into the focused app: "paste" (clipboard + Cmd-V,
// restoring the previous clipboard after RestoreDelay when restore is set),
// "copy" (clipboard only) or "type" (synthesized keystrokes, clipboard
// untouched). Paste and type need the Accessibility permission; without it
// paste leaves the text on the clipboard and returns ErrNotTrusted.
func Insert(text, mode string, restore bool) error {
	if err := load(); err != nil {
		return err
	}
	switch mode {
	case ModePaste:
		return global.insert(text, true, restore)
	case ModeCopy:
		return global.insert(text, false, false)
	case ModeType:
		return typeText(text)
	}
	return fmt.Errorf("paste: unknown mode %q", mode)
}

// Flush puts a pending clipboard restore back now; call it before quitting.
func Flush() error {
	if load() != nil {
		return nil
	}
	return global.flush()
}

// nsBoard is the general pasteboard.
type nsBoard struct{}

func general() objc.ID {
	return objc.ID(objc.GetClass("NSPasteboard")).Send(selGeneralPasteboard)
}

func (nsBoard) ChangeCount() int {
	var n int
	ns.WithPool(func() { n = objc.Send[int](general(), selChangeCount) })
	return n
}

// Snapshot copies every type of every item, so images, rich text and file
// references come back too, not only plain text.
func (nsBoard) Snapshot() (Snapshot, error) {
	var s Snapshot
	ns.WithPool(func() {
		items := general().Send(selPasteboardItems)
		for i := 0; i < ns.Count(items); i++ {
			item := ns.At(items, i)
			types := item.Send(selTypes)
			for j := 0; j < ns.Count(types); j++ {
				t := ns.At(types, j)
				data := item.Send(selDataForType, t)
				if data == 0 {
					continue // a promise the owner no longer fulfils
				}
				s.Add(i, Entry{Type: ns.GoString(t), Data: ns.Bytes(data)})
			}
		}
	})
	return s, nil
}

func (nsBoard) Restore(s Snapshot) error {
	var ok = true
	ns.WithPool(func() {
		pb := general()
		pb.Send(selClearContents)
		if len(s.Items) == 0 {
			return
		}
		arr := objc.ID(objc.GetClass("NSMutableArray")).Send(selArrayWithCapacity, uint(len(s.Items)))
		for _, entries := range s.Items {
			if len(entries) == 0 {
				continue
			}
			item := objc.ID(objc.GetClass("NSPasteboardItem")).Send(selAlloc).Send(selInit)
			for _, e := range entries {
				item.Send(selSetDataForType, ns.Data(e.Data), ns.String(e.Type))
			}
			arr.Send(selAddObject, item)
			ns.Release(item)
		}
		ok = objc.Send[bool](pb, selWriteObjects, arr)
	})
	if !ok {
		return fmt.Errorf("paste: the pasteboard refused the saved content")
	}
	return nil
}

func (nsBoard) SetText(text string, transient bool) error {
	var ok bool
	ns.WithPool(func() {
		pb := general()
		pb.Send(selClearContents)
		item := objc.ID(objc.GetClass("NSPasteboardItem")).Send(selAlloc).Send(selInit)
		defer ns.Release(item)
		if !objc.Send[bool](item, selSetStringForType, ns.String(text), typeString) {
			return
		}
		if transient {
			// The nspasteboard.org convention: clipboard managers skip
			// items carrying this type.
			item.Send(selSetDataForType, ns.Data(nil), ns.String(transientUTI))
		}
		ok = objc.Send[bool](pb, selWriteObjects, ns.Array(item))
	})
	if !ok {
		return fmt.Errorf("paste: the pasteboard refused the text")
	}
	return nil
}

// postPaste sends Cmd-V down and up.
func postPaste() error {
	if permissions.AccessibilityStatus() != permissions.Granted {
		return ErrNotTrusted
	}
	src := cgEventSourceCreate(stateHIDSystem)
	if src != 0 {
		defer cfRelease(src)
	}
	for _, down := range []bool{true, false} {
		ev := cgEventCreateKeyboardEvent(src, keyV, down)
		if ev == 0 {
			return fmt.Errorf("paste: CGEventCreateKeyboardEvent failed")
		}
		cgEventSetFlags(ev, flagMaskCommand)
		cgEventPost(hidEventTap, ev)
		cfRelease(ev)
		time.Sleep(keystrokeSpacing)
	}
	return nil
}

// typeText types text as Unicode keyboard events, 20 UTF-16 units each,
// leaving the clipboard alone (for apps that block paste).
func typeText(text string) error {
	if permissions.AccessibilityStatus() != permissions.Granted {
		return fmt.Errorf("paste: Accessibility permission is needed to type into other apps")
	}
	src := cgEventSourceCreate(stateHIDSystem)
	if src != 0 {
		defer cfRelease(src)
	}
	for _, chunk := range chunkUTF16(text, maxUnicodeChunk) {
		for _, down := range []bool{true, false} {
			ev := cgEventCreateKeyboardEvent(src, 0, down)
			if ev == 0 {
				return fmt.Errorf("paste: CGEventCreateKeyboardEvent failed")
			}
			cgEventKeyboardSetUnicodeString(ev, uint(len(chunk)), &chunk[0])
			cgEventPost(hidEventTap, ev)
			cfRelease(ev)
		}
		time.Sleep(keystrokeSpacing)
	}
	return nil
}

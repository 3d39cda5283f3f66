package textfield

import (
	"fmt"
	"structs"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
)

// cfRange is CFRange: { CFIndex location; CFIndex length; }.
type cfRange struct {
	_        structs.HostLayout
	Location int64
	Length   int64
}

// cgRect is CGRect: origin and size, CGFloat each.
type cgRect struct {
	_                   structs.HostLayout
	X, Y, Width, Height float64
}

const (
	axSuccess      = 0 // kAXErrorSuccess
	axValueCGRect  = 3 // kAXValueTypeCGRect
	axValueCFRange = 4 // kAXValueTypeCFRange
)

var (
	// AXUIElementRef AXUIElementCreateSystemWide(void);
	axSystemWide func() uintptr
	// AXError AXUIElementCopyAttributeValue(AXUIElementRef, CFStringRef attribute, CFTypeRef *value);
	axCopyAttr func(el uintptr, attr objc.ID, out *uintptr) int32
	// AXError AXUIElementSetAttributeValue(AXUIElementRef, CFStringRef attribute, CFTypeRef value);
	axSetAttr func(el uintptr, attr objc.ID, value uintptr) int32
	// AXValueRef AXValueCreate(AXValueType theType, const void *valuePtr);
	axValueCreate func(typ uint32, ptr unsafe.Pointer) uintptr
	// Boolean AXValueGetValue(AXValueRef value, AXValueType theType, void *valuePtr);
	axValueGetValue func(v uintptr, typ uint32, ptr unsafe.Pointer) bool
	// AXError AXUIElementCopyParameterizedAttributeValue(AXUIElementRef, CFStringRef parameterizedAttribute, CFTypeRef parameter, CFTypeRef *result);
	axCopyParamAttr func(el uintptr, attr objc.ID, param uintptr, out *uintptr) int32
	// AXError AXUIElementSetMessagingTimeout(AXUIElementRef, float timeoutInSeconds);
	axSetTimeout func(el uintptr, seconds float32) int32
	// void CFRelease(CFTypeRef);
	cfRelease func(ref uintptr)

	selIsKindOfClass = objc.RegisterName("isKindOfClass:") // -[NSObject isKindOfClass:(Class)] -> BOOL

	loadOnce sync.Once
	loadErr  error
)

func load() error {
	loadOnce.Do(func() {
		// AX* live in HIServices, re-exported by ApplicationServices.
		ax, err := ns.Framework("ApplicationServices")
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
			ns.Sym{Lib: ax, Fn: &axSystemWide, Name: "AXUIElementCreateSystemWide"},
			ns.Sym{Lib: ax, Fn: &axCopyAttr, Name: "AXUIElementCopyAttributeValue"},
			ns.Sym{Lib: ax, Fn: &axSetAttr, Name: "AXUIElementSetAttributeValue"},
			ns.Sym{Lib: ax, Fn: &axValueCreate, Name: "AXValueCreate"},
			ns.Sym{Lib: ax, Fn: &axValueGetValue, Name: "AXValueGetValue"},
			ns.Sym{Lib: ax, Fn: &axCopyParamAttr, Name: "AXUIElementCopyParameterizedAttributeValue"},
			ns.Sym{Lib: ax, Fn: &axSetTimeout, Name: "AXUIElementSetMessagingTimeout"},
			ns.Sym{Lib: cf, Fn: &cfRelease, Name: "CFRelease"},
		)
	})
	return loadErr
}

// ReplaceEnd replaces old at the end of the focused text field's value
// with better: it selects that range (AXSelectedTextRange) and sets the
// selected text (AXSelectedText), which editable fields apply as typing
// would, undo included. A field that does not end with old, or exposes no
// string value (a secure or custom field), is left alone: false, nil.
func ReplaceEnd(old, better string) (bool, error) {
	if err := load(); err != nil {
		return false, err
	}
	var done bool
	var err error
	ns.WithPool(func() { done, err = replaceEnd(old, better) })
	return done, err
}

// replaceEnd runs inside an autorelease pool (the attribute names and the
// new text are autoreleased NSStrings, toll-free bridged to CFString).
func replaceEnd(old, better string) (bool, error) {
	sys := axSystemWide()
	if sys == 0 {
		return false, fmt.Errorf("textfield: no system-wide accessibility element")
	}
	defer cfRelease(sys)
	var el uintptr
	if st := axCopyAttr(sys, ns.String("AXFocusedUIElement"), &el); st != axSuccess || el == 0 {
		return false, nil // nothing focused, or Accessibility not allowed: offer instead
	}
	defer cfRelease(el)
	var val uintptr
	if st := axCopyAttr(el, ns.String("AXValue"), &val); st != axSuccess || val == 0 {
		return false, nil
	}
	defer cfRelease(val)
	if !objc.Send[bool](objc.ID(val), selIsKindOfClass, objc.GetClass("NSString")) {
		return false, nil
	}
	loc, n, ok := suffixRange(ns.GoString(objc.ID(val)), old)
	if !ok {
		return false, nil
	}
	r := cfRange{Location: int64(loc), Length: int64(n)}
	rv := axValueCreate(axValueCFRange, unsafe.Pointer(&r))
	if rv == 0 {
		return false, fmt.Errorf("textfield: AXValueCreate failed")
	}
	defer cfRelease(rv)
	if st := axSetAttr(el, ns.String("AXSelectedTextRange"), rv); st != axSuccess {
		return false, fmt.Errorf("textfield: selecting the inserted text: AXError %d", st)
	}
	if st := axSetAttr(el, ns.String("AXSelectedText"), uintptr(ns.String(better))); st != axSuccess {
		return false, fmt.Errorf("textfield: replacing the inserted text: AXError %d", st)
	}
	return true, nil
}

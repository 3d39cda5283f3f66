package ns

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

var (
	selAlloc             = objc.RegisterName("alloc")
	selInit              = objc.RegisterName("init")
	selNew               = objc.RegisterName("new")
	selRetain            = objc.RegisterName("retain")
	selRelease           = objc.RegisterName("release")
	selDrain             = objc.RegisterName("drain")
	selStringWithUTF8    = objc.RegisterName("stringWithUTF8String:") // +[NSString stringWithUTF8String:(const char *)]
	selUTF8String        = objc.RegisterName("UTF8String")            // -[NSString UTF8String] -> const char *
	selLocalizedDesc     = objc.RegisterName("localizedDescription")  // -[NSError localizedDescription] -> NSString *
	selDomain            = objc.RegisterName("domain")                // -[NSError domain] -> NSErrorDomain
	selCode              = objc.RegisterName("code")                  // -[NSError code] -> NSInteger
	selDataWithBytes     = objc.RegisterName("dataWithBytes:length:") // +[NSData dataWithBytes:(const void *) length:(NSUInteger)]
	selBytes             = objc.RegisterName("bytes")                 // -[NSData bytes] -> const void *
	selLength            = objc.RegisterName("length")                // -[NSData length] -> NSUInteger
	selCount             = objc.RegisterName("count")                 // -[NSArray count] -> NSUInteger
	selObjectAtIndex     = objc.RegisterName("objectAtIndex:")        // -[NSArray objectAtIndex:(NSUInteger)] -> id
	selArrayWithObject   = objc.RegisterName("arrayWithObject:")      // +[NSArray arrayWithObject:(id)]
	selNumberWithBool    = objc.RegisterName("numberWithBool:")       // +[NSNumber numberWithBool:(BOOL)]
	selDictWithObjForKey = objc.RegisterName("dictionaryWithObject:forKey:")
	selInitWithBytes     = objc.RegisterName("initWithBytes:length:encoding:") // -[NSString initWithBytes:(const void *) length:(NSUInteger) encoding:(NSStringEncoding)]
)

// utf8Encoding is NSUTF8StringEncoding.
const utf8Encoding = 4

var (
	mu   sync.Mutex
	libs = map[string]uintptr{}
)

// Framework dlopens /System/Library/Frameworks/<name>.framework/<name> once
// and returns its handle. RTLD_GLOBAL makes its Objective-C classes visible
// to objc.GetClass. Foundation is always loaded first, since every package
// here needs NSString.
func Framework(name string) (uintptr, error) {
	mu.Lock()
	defer mu.Unlock()
	if name != "Foundation" {
		if _, err := open("Foundation"); err != nil {
			return 0, err
		}
	}
	return open(name)
}

func open(name string) (uintptr, error) {
	if h, ok := libs[name]; ok {
		return h, nil
	}
	path := "/System/Library/Frameworks/" + name + ".framework/" + name
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, fmt.Errorf("macos: load %s: %w", name, err)
	}
	libs[name] = h
	return h, nil
}

// Func binds the C function name in lib to fptr (a pointer to a Go func
// variable), returning an error instead of purego's panic when the symbol is
// missing on this macOS version.
func Func(fptr any, lib uintptr, name string) error {
	sym, err := purego.Dlsym(lib, name)
	if err != nil {
		return fmt.Errorf("macos: symbol %s: %w", name, err)
	}
	purego.RegisterFunc(fptr, sym)
	return nil
}

// Global reads an exported object constant such as NSPasteboardTypeString
// (declared `extern NSString * const X`): the symbol's address holds the id.
func Global(lib uintptr, name string) (objc.ID, error) {
	addr, err := purego.Dlsym(lib, name)
	if err != nil {
		return 0, fmt.Errorf("macos: symbol %s: %w", name, err)
	}
	// Double indirection keeps vet's unsafeptr check quiet: addr is a C
	// address, never Go memory.
	p := *(**objc.ID)(unsafe.Pointer(&addr))
	return *p, nil
}

// Class looks up an Objective-C class, failing clearly when this macOS
// version lacks it (SMAppService before macOS 13, say).
func Class(name string) (objc.ID, error) {
	c := objc.GetClass(name)
	if c == 0 {
		return 0, fmt.Errorf("macos: class %s not available", name)
	}
	return objc.ID(c), nil
}

// String returns an autoreleased NSString holding s.
func String(s string) objc.ID {
	return objc.ID(objc.GetClass("NSString")).Send(selStringWithUTF8, s)
}

// NewString returns an NSString holding s that the caller owns (alloc and
// initWithBytes:length:encoding:, no autorelease): release it. For
// strings kept past a pool, or made outside one.
func NewString(s string) objc.ID {
	b := []byte(s)
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	str := objc.ID(objc.GetClass("NSString")).Send(selAlloc).Send(selInitWithBytes, p, uint(len(b)), uint(utf8Encoding))
	runtime.KeepAlive(b)
	return str
}

// GoString copies an NSString into Go ("" for nil).
func GoString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	return objc.Send[string](s, selUTF8String)
}

// NSError converts an NSError (nil gives nil) to *Error with its
// localizedDescription.
func NSError(e objc.ID) error {
	if e == 0 {
		return nil
	}
	return &Error{
		Domain:      GoString(e.Send(selDomain)),
		Code:        objc.Send[int](e, selCode),
		Description: GoString(e.Send(selLocalizedDesc)),
	}
}

// Data returns an autoreleased NSData copy of b.
func Data(b []byte) objc.ID {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	return objc.ID(objc.GetClass("NSData")).Send(selDataWithBytes, p, uint(len(b)))
}

// Bytes copies an NSData's contents into Go memory.
func Bytes(d objc.ID) []byte {
	if d == 0 {
		return nil
	}
	n := objc.Send[uint](d, selLength)
	if n == 0 {
		return []byte{}
	}
	p := objc.Send[unsafe.Pointer](d, selBytes)
	out := make([]byte, n)
	copy(out, unsafe.Slice((*byte)(p), n))
	return out
}

// Count is -[NSArray count].
func Count(a objc.ID) int {
	if a == 0 {
		return 0
	}
	return int(objc.Send[uint](a, selCount))
}

// At is -[NSArray objectAtIndex:].
func At(a objc.ID, i int) objc.ID { return a.Send(selObjectAtIndex, uint(i)) }

// Array returns an autoreleased one-element NSArray.
func Array(o objc.ID) objc.ID {
	return objc.ID(objc.GetClass("NSArray")).Send(selArrayWithObject, o)
}

// Bool returns an autoreleased NSNumber (kCFBooleanTrue/False bridge).
func Bool(v bool) objc.ID {
	return objc.ID(objc.GetClass("NSNumber")).Send(selNumberWithBool, v)
}

// Dict returns an autoreleased one-entry NSDictionary; toll-free bridged to
// CFDictionaryRef for C APIs taking options dictionaries.
func Dict(key, value objc.ID) objc.ID {
	return objc.ID(objc.GetClass("NSDictionary")).Send(selDictWithObjForKey, value, key)
}

// Alloc is [[cls alloc] init] on a class object.
func Alloc(cls objc.ID) objc.ID { return cls.Send(selAlloc).Send(selInit) }

// Retain and Release manage ownership of objects kept past a pool drain.
func Retain(o objc.ID) objc.ID {
	if o == 0 {
		return 0
	}
	return o.Send(selRetain)
}

// Release balances a Retain or an alloc.
func Release(o objc.ID) {
	if o != 0 {
		o.Send(selRelease)
	}
}

// WithPool runs f inside an NSAutoreleasePool so autoreleased objects made
// by f are freed when it returns. Pools belong to a thread, so the goroutine
// stays on its OS thread meanwhile.
func WithPool(f func()) {
	_, _ = Framework("Foundation") // NSAutoreleasePool lives there
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool := objc.ID(objc.GetClass("NSAutoreleasePool")).Send(selNew)
	defer pool.Send(selDrain)
	f()
}

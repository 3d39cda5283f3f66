package metal

import (
	"testing"

	"github.com/ebitengine/purego"
)

// BenchmarkPuregoCall estimates the cost of one Objective-C message on a
// Mac from here: a purego call with the exact Go signatures of the
// encoder's hot messages (setBuffer:offset:atIndex: and
// dispatchThreadgroups:threadsPerThreadgroup:, whose MTLSize structs go by
// value) into libc's abs, which does no system call and ignores the extra arguments. objc_msgSend's
// own dispatch (a cached method lookup, a few ns) and Metal's work inside
// the method are not included.
func BenchmarkPuregoCall(b *testing.B) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		b.Fatal(err)
	}
	var setBuffer func(enc, sel, buf uintptr, off, index uint64) int32
	var dispatch func(enc, sel uintptr, g, t mtlSize) int32
	purego.RegisterLibFunc(&setBuffer, libc, "abs")
	purego.RegisterLibFunc(&dispatch, libc, "abs")
	b.Run("setBuffer", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			setBuffer(1, 2, 3, uint64(i), 4)
		}
	})
	fn, err := purego.Dlsym(libc, "abs")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("SyscallN-5-args", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			purego.SyscallN(fn, 1, 2, 3, uintptr(i), 4)
		}
	})
	b.Run("SyscallN-12-args", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			purego.SyscallN(fn, 1, 2, 0, 0, 0, 0, 1, 2, 3, 32, 1, 1)
		}
	})
	b.Run("dispatch-structs", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			dispatch(1, 2, mtlSize{1, 2, 3}, mtlSize{32, 1, 1})
		}
	})
}

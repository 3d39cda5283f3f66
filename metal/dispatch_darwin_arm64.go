package metal

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// dispatch sends dispatchThreadgroups:threadsPerThreadgroup:. On arm64 a
// struct over 16 bytes (MTLSize is 24) is passed as a pointer to a copy
// the caller made (AAPCS64), so the message needs no struct support and
// goes through SyscallN like the others (BenchmarkPuregoCall: about a
// seventh of the cost of a registered signature with structs).
func (c *mtlCB) dispatch(g, t [3]uint32) {
	c.groups = mtlSize{uint64(g[0]), uint64(g[1]), uint64(g[2])}
	c.threads = mtlSize{uint64(t[0]), uint64(t[1]), uint64(t[2])}
	purego.SyscallN(msgSend, uintptr(c.enc), uintptr(sel.dispatch), uintptr(unsafe.Pointer(&c.groups)), uintptr(unsafe.Pointer(&c.threads)))
	runtime.KeepAlive(c)
}

// Package shaders holds Hark's Metal Shading Language kernels and the table
// that maps each plan dispatch onto a kernel launch. The Metal backend and
// the MSL test executor both use it, so the geometry tested on Linux is the
// geometry run on a Mac (see README.md for the ABI).
package shaders

import (
	"embed"
	"encoding/binary"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/harkapp/hark/engine/plan"
)

//go:embed *.metal
var files embed.FS

// Source returns the library source: common.metal first, then every other
// .metal file in name order.
func Source() string {
	var b strings.Builder
	for _, name := range Files() {
		data, _ := fs.ReadFile(files, name)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// Files lists the embedded .metal files in library order.
func Files() []string {
	ents, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range ents {
		if e.Name() != "common.metal" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return append([]string{"common.metal"}, names...)
}

// File returns one embedded .metal file.
func File(name string) ([]byte, error) { return fs.ReadFile(files, name) }

// Buffer indices of the ABI.
const (
	ArgsIndex    = 8  // constant Args&
	ScratchIndex = 10 // per-dispatch scratch (Launch.Scratch bytes)
	ArgsSize     = 80 // bytes of Args
)

// Launch is one kernel launch of a dispatch.
type Launch struct {
	Function    string
	Groups      [3]uint32 // threadgroups per grid
	Threads     [3]uint32 // threads per threadgroup
	Threadgroup uint32    // dynamic threadgroup memory bytes at [[threadgroup(0)]]
	Scratch     uint32    // bytes of [[buffer(10)]], shared by all launches of the dispatch
	Constants   []Constant
}

// Constant is a function-constant value of a launch's pipeline.
type Constant struct {
	Index int
	Value uint32
}

// Args encodes the Args block of a resolved dispatch (README.md, item 3).
func Args(d *plan.Dispatch, dst *[ArgsSize]byte) {
	for i, w := range d.P {
		binary.LittleEndian.PutUint32(dst[4*i:], w)
	}
	var mask uint32
	for i := 0; i < int(d.NBind); i++ {
		if d.Bind[i].Buf != plan.NoBuf {
			mask |= 1 << i
		}
	}
	binary.LittleEndian.PutUint32(dst[64:], mask)
	for i, g := range d.Grid {
		binary.LittleEndian.PutUint32(dst[68+4*i:], g)
	}
}

// launcher maps a resolved dispatch onto its launches, appending to dst.
type launcher func(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error)

var launchers = map[plan.Kernel]launcher{}

// register installs the launch rule of a kernel; each kernel file's Go
// twin calls it from init.
func register(k plan.Kernel, l launcher) {
	if _, dup := launchers[k]; dup {
		panic("shaders: kernel registered twice: " + k.String())
	}
	launchers[k] = l
}

// LaunchFor appends the launches that run d (already resolved for its step)
// to dst. It allocates nothing when dst has room.
func LaunchFor(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	l, ok := launchers[d.Kernel]
	if !ok {
		return dst, fmt.Errorf("shaders: no MSL kernel for %s", d.Kernel)
	}
	return l(d, t, dst)
}

// Missing lists the plan kernels that have no launch rule yet.
func Missing() []plan.Kernel {
	var out []plan.Kernel
	for _, k := range plan.Kernels() {
		if _, ok := launchers[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

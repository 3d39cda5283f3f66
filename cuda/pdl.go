package cuda

import (
	"unsafe"

	"github.com/harkapp/hark/cuda/ptxpdl"
)

// Programmatic dependent launch (PDL, compute capability 9.0 and newer).
// A decode step is hundreds of short kernels, each depending on the one
// before; even replayed from a CUDA graph each pays its launch and ramp-up
// after its predecessor's last block ends (~6-7 µs a kernel of Whisper's
// decoder step on the H200). Launched with the programmatic stream
// serialization attribute, a kernel's blocks may be scheduled as its
// predecessor's blocks exit, before that grid has completed: they wait
// (griddepcontrol.wait, the first thing every entry does in a module made
// by cuda/ptxpdl) until it has and its writes are visible, so the
// ordering is the stream's, only the launch latency overlaps. Stream
// capture keeps the attribute as a programmatic edge of the graph.
//
// A kernel overlaps its predecessor only where both are kernels: after a
// memset of a function constant, a poison fill or an event the launch is
// a plain one, as is the first launch of every batch (copies and graph
// launches come between batches). Options.NoPDL ($HARK_CUDA_PDL=0) and
// Options.Profile (events between kernels) launch every kernel plainly.

// launchAttrProgrammaticStreamSerialization is
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
const launchAttrProgrammaticStreamSerialization = 6

// launchConfig is CUlaunchConfig (cuLaunchKernelEx's first argument).
type launchConfig struct {
	grid   [3]uint32
	block  [3]uint32
	shared uint32
	_      uint32
	stream uintptr
	attrs  *launchAttr
	nattrs uint32
	_      uint32
}

// launchAttr is CUlaunchAttribute: an id, padding, and a 64-byte union
// whose first int is programmaticStreamSerializationAllowed.
type launchAttr struct {
	id  uint32
	_   uint32
	val [64]byte
}

// Layouts of the driver's structs (64-bit): checked at compile time.
var (
	_ [56 - unsafe.Sizeof(launchConfig{})]byte
	_ [unsafe.Sizeof(launchConfig{}) - 56]byte
	_ [72 - unsafe.Sizeof(launchAttr{})]byte
	_ [unsafe.Sizeof(launchAttr{}) - 72]byte
)

// jitImage is a module's PTX as the driver should compile it for compute
// capability cc: its PDL form from 9.0 on (then true), else as stored.
// The stored modules always patch (cuda/ptxpdl's TestPatchModules); PTX
// that does not is loaded as it is, its kernels launched plainly.
func jitImage(ptx string, cc int) ([]byte, bool) {
	if cc >= ptxpdl.MinCompute {
		if p, err := ptxpdl.Patch([]byte(ptx)); err == nil {
			return append(p, 0), true
		}
	}
	return append([]byte(ptx), 0), false
}

// pdlOn says whether b launches kernels of PDL modules to overlap their
// predecessors.
func (b *Backend) pdlOn() bool {
	return b.dev.d.cuLaunchKernelEx != nil && !b.opt.NoPDL && !b.opt.Profile
}

// launchOverlapped launches rec's kernel on stream with the programmatic
// stream serialization attribute (its parameter in e.prmPtr, as for
// cuLaunchKernel).
func (e *Exec) launchOverlapped(rec *launchRec, stream uintptr) result {
	e.pdlAttr = launchAttr{id: launchAttrProgrammaticStreamSerialization}
	e.pdlAttr.val[0] = 1
	e.pdlCfg = launchConfig{grid: rec.groups, block: rec.threads, shared: rec.shared, stream: stream, attrs: &e.pdlAttr, nattrs: 1}
	return e.b.dev.d.cuLaunchKernelEx(&e.pdlCfg, rec.fn.h, &e.prmPtr, nil)
}

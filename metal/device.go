// Package metal is Hark's Metal backend: a host layer over Metal through
// purego (darwin only, no cgo) and an executor that replays the engine's
// plans (see README.md).
//
// Everything that is not a Metal call lives in files without build tags
// (weights regions, buffer placement, hazard tracking, the command list of a
// pass, the chaining schedule) and runs on Linux against a recording fake
// device; the *_darwin.go files only translate the device interfaces below
// into Objective-C messages.
package metal

import (
	"github.com/harkapp/hark/shaders"
)

// handle is an opaque device object (an Objective-C id on darwin, an index
// in the test fake).
type handle uintptr

// Info describes the GPU a backend runs on.
type Info struct {
	Name string
	// Family is the Tuning family picked from supportsFamily: (Apple9,
	// Apple8, Apple7, Mac2 or "default").
	Family string
	// WorkingSet is recommendedMaxWorkingSetSize: the memory the GPU can
	// use without hurting performance.
	WorkingSet uint64
	// MaxBuffer is maxBufferLength, the largest single buffer.
	MaxBuffer uint64
	Unified   bool
	// MaxThreadgroupMemory is maxThreadgroupMemoryLength (32 KiB on Apple
	// GPUs): the most dynamic threadgroup memory a launch may ask for.
	MaxThreadgroupMemory uint32
	// PageSize is the host page size (16 KiB on Apple silicon), the
	// granularity of zero-copy buffers.
	PageSize int
	// DeviceFence: the OS compiles MSL 3.2 or newer, which has
	// atomic_thread_fence at device scope, what the sampler's ticket
	// between threadgroups needs (sample.metal, smp_ticket). Without it
	// the sampler runs in one threadgroup (newBackend).
	DeviceFence bool
}

// storage is where a buffer lives (MTLStorageMode).
type storage uint8

const (
	// shared: one copy visible to CPU and GPU (IO, State, small weights).
	shared storage = iota
	// private: GPU only (Scratch, per-dispatch scratch).
	private
)

// buffer is a device buffer; mem is its contents for shared buffers (nil
// for private ones).
type buffer struct {
	h    handle
	size int64
	mem  []byte
}

// pipeline is a compute pipeline state with the limits launches must obey.
type pipeline struct {
	h          handle
	maxThreads uint32 // maxTotalThreadsPerThreadgroup
	execWidth  uint32 // threadExecutionWidth
}

// device is what the executor needs from Metal.
type device interface {
	info() Info
	// newBuffer allocates a zeroed buffer.
	newBuffer(size int64, mode storage) (buffer, error)
	// wrap makes a buffer over mem without copying (mem is page-aligned and
	// a whole number of pages; it must outlive the buffer).
	wrap(mem []byte) (buffer, error)
	release(b buffer)
	// pipeline compiles (or returns the cached) pipeline of a function
	// specialised with constants.
	pipeline(fn string, consts []shaders.Constant) (pipeline, error)
	// commandBuffer starts a command buffer with one compute encoder.
	commandBuffer() (cmdBuffer, error)
	close()
}

// cmdBuffer is a command buffer with its compute encoder.
type cmdBuffer interface {
	encoder() encoder
	// commit ends the encoder, encodes a signal of the device's shared
	// event after all work, commits, and returns the value signalled (one
	// more than the last, device-wide).
	commit() uint64
	// wait blocks until the shared event reaches the value commit
	// signalled (or the command buffer failed) and returns the command
	// buffer's error (Metal's message) if it failed.
	wait() error
	// gpuTime is GPUStartTime and GPUEndTime in seconds (valid after wait).
	gpuTime() (start, end float64)
	// release frees the command buffer after wait.
	release()
}

// encoder is a compute command encoder of concurrent dispatch type:
// dispatches only wait for earlier ones at barriers.
type encoder interface {
	setPipeline(p handle)
	setBuffer(b handle, off uint64, index int)
	// setBufferOffset changes only the offset of the buffer bound at index.
	setBufferOffset(off uint64, index int)
	// setBuffers binds bufs[i] at offs[i] to index start+i, in one
	// message (setBuffers:offsets:withRange:).
	setBuffers(bufs []handle, offs []uint64, start int)
	setBytes(args *[shaders.ArgsSize]byte, index int)
	setThreadgroupMemory(bytes uint32, index int)
	dispatch(groups, threads [3]uint32)
	// barrier makes later dispatches wait for earlier ones (buffer scope).
	barrier()
}

// mtlSize is MTLSize (three NSUIntegers), passed by value.
type mtlSize struct{ w, h, d uint64 }

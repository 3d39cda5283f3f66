// Package backendstest stands in for GPU backends on machines without
// them: a fake driver under a GPU's name that computes on the CPU, so tests
// can check which backend callers get (and that models run on it).
package backendstest

import (
	"sync/atomic"
	"testing"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/cpu"
)

// GPU is a CPU backend that reports a GPU's name.
type GPU struct {
	*cpu.Backend
	name string
}

// Name is the GPU driver's name.
func (g *GPU) Name() string { return g.name }

// FakeGPU installs, for the test's duration, a driver called name (e.g.
// backends.Metal) that auto picks before the CPU. Opens counts how many
// backends it started.
func FakeGPU(t testing.TB, name string) *Opens {
	t.Helper()
	o := &Opens{}
	restore := backends.Replace(backends.Driver{Name: name, Open: func(bo backends.Options, _ bool) (backends.Backend, error) {
		o.n.Add(1)
		o.gpu.Store(int64(bo.GPU))
		return &GPU{Backend: cpu.New(cpu.Options{Threads: bo.Threads}), name: name}, nil
	}})
	t.Cleanup(restore)
	return o
}

// Opens counts a fake driver's opened backends.
type Opens struct{ n, gpu atomic.Int64 }

// GPU is the GPU index (--gpu) of the last open.
func (o *Opens) GPU() int { return int(o.gpu.Load()) }

// N is the count so far.
func (o *Opens) N() int { return int(o.n.Load()) }

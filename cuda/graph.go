package cuda

import (
	"fmt"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
)

// Replay: a batch of steps (one decode pass, or a chain of chainSteps decode
// and argmax steps) is recorded once as a CUDA graph by stream capture and
// replayed with one cuGraphLaunch whenever a batch with the same key
// comes again (the same passes, launch geometry, constants and scratch:
// see batch.key). What changes from replay to replay, the step variables
// (position, KV length, token slot, sampler step), is copied to a small
// device buffer before the launch, and the kernels of dispatches with
// patches read it (Params.step in msl_cuda.h), so a replay updates no
// parameter of the graph.
//
// A key is recorded the second time it comes (a one-off shape, such as a
// prompt's prefill, is not worth a capture), and replayed from the third:
// that second time the batch is launched kernel by kernel as before, and
// then captured on a second stream while the GPU runs it, so the capture
// and instantiation (~17 µs a kernel node on the H200: a 64-token chain
// batch of the SmolLM2 shape is ~17,500 nodes) overlap the GPU's work
// instead of stalling it. Until then, and where graphs are off
// (Options.NoGraphs, a permuted block order, profiling, a driver without
// them), batches are launched kernel by kernel.

// stepRows is the most steps one batch holds: the step buffer's rows.
const stepRows = 128

// maxGraphs bounds the recorded graphs of one executable; the oldest go
// first.
const maxGraphs = 64

// maxSeen bounds the keys remembered while waiting for their second use.
const maxSeen = 1024

type graphEntry struct {
	exec uintptr // 0: the shape could not be recorded
	age  int
}

// graphs are an executable's recorded graphs by batch key.
type graphs struct {
	byKey map[string]*graphEntry
	seen  map[string]int
	clock int
}

// useGraphs says whether batches replay graphs.
func (e *Exec) useGraphs() bool {
	return e.b.dev.d.graphs && !e.b.opt.NoGraphs && e.b.opt.PermuteSeed == 0 && !e.b.opt.Profile
}

// run issues a prepared batch: a replay of its graph (recorded now if its
// key comes the second time) or its launches one by one. The caller
// holds the device and waits for the stream.
func (e *Exec) run(b *batch) error {
	e.stats.Steps += len(b.vars)
	e.stats.DeepSplits += b.deepSplits
	if err := e.ensureArena(b.scratch); err != nil {
		return err
	}
	if !e.useGraphs() {
		return e.issue(b, false)
	}
	g := &e.graphs
	if g.byKey == nil {
		g.byKey, g.seen = map[string]*graphEntry{}, map[string]int{}
	}
	ent := g.byKey[string(b.key)]
	if ent == nil {
		if g.seen[string(b.key)]++; g.seen[string(b.key)] < 2 {
			if len(g.seen) > maxSeen {
				clear(g.seen)
			}
			return e.issue(b, false)
		}
		delete(g.seen, string(b.key))
		if err := e.issue(b, false); err != nil {
			return err
		}
		exec, err := e.record(b)
		if err != nil {
			// launched kernel by kernel instead, now and whenever the
			// shape comes again; the failure is counted and kept
			e.stats.RecordFailures++
			if e.stats.RecordError == "" {
				e.stats.RecordError = err.Error()
			}
		}
		if len(g.byKey) >= maxGraphs {
			e.dropOldestGraph()
		}
		g.clock++
		g.byKey[string(b.key)] = &graphEntry{exec: exec, age: g.clock}
		return nil
	}
	g.clock++
	ent.age = g.clock
	if ent.exec == 0 {
		return e.issue(b, false)
	}
	return e.replay(b, ent.exec)
}

// runLead issues a chain's lead batch (plan.ChainIO.Lead: a prompt, whose
// shape changes from chain to chain, so a graph of it would rarely
// replay) kernel by kernel.
func (e *Exec) runLead(b *batch) error {
	e.stats.Steps += len(b.vars)
	e.stats.DeepSplits += b.deepSplits
	if err := e.ensureArena(b.scratch); err != nil {
		return err
	}
	return e.issue(b, false)
}

// record captures b's launches as a graph on the capture stream (nothing
// runs) and instantiates it.
func (e *Exec) record(b *batch) (uintptr, error) {
	dev := e.b.dev
	d := dev.d
	if err := d.err("cuStreamBeginCapture", d.cuStreamBeginCapture(dev.capture, captureThreadLocal)); err != nil {
		return 0, fmt.Errorf("cuda: plan %s: %w", e.name, err)
	}
	ierr := e.issue(b, true)
	var graph uintptr
	// the capture ends even after a failed launch, which invalidates it
	if err := d.err("cuStreamEndCapture", d.cuStreamEndCapture(dev.capture, &graph)); err != nil && ierr == nil {
		ierr = err
	}
	if ierr != nil {
		if graph != 0 {
			d.cuGraphDestroy(graph)
		}
		return 0, fmt.Errorf("%w (recording a graph)", ierr)
	}
	var exec uintptr
	err := d.err("cuGraphInstantiateWithFlags", d.cuGraphInstantiateWithFlags(&exec, graph, 0))
	// the executable graph is independent of the graph it was made from
	d.cuGraphDestroy(graph)
	if err != nil {
		return 0, fmt.Errorf("cuda: plan %s: %w", e.name, err)
	}
	e.stats.GraphsBuilt++
	return exec, nil
}

// replay copies b's step variables to the step buffer and launches exec
// after it on the stream.
func (e *Exec) replay(b *batch, exec uintptr) error {
	dev := e.b.dev
	d := dev.d
	n := uint64(len(b.vars)) * uint64(unsafe.Sizeof(plan.Vars{}))
	copy(unsafe.Slice((*plan.Vars)(e.stepHost), len(b.vars)), b.vars)
	if err := d.err("cuMemcpyHtoDAsync", d.cuMemcpyHtoDAsync(e.stepDev, e.stepHost, n, dev.stream)); err != nil {
		return fmt.Errorf("cuda: plan %s: step variables: %w", e.name, err)
	}
	if err := d.err("cuGraphLaunch", d.cuGraphLaunch(exec, dev.stream)); err != nil {
		return fmt.Errorf("cuda: plan %s: %w", e.name, err)
	}
	e.stats.GraphLaunches++
	return nil
}

func (e *Exec) dropOldestGraph() {
	var oldest string
	age := -1
	for k, ent := range e.graphs.byKey {
		if age < 0 || ent.age < age {
			oldest, age = k, ent.age
		}
	}
	if age >= 0 {
		if x := e.graphs.byKey[oldest].exec; x != 0 {
			e.b.dev.d.cuGraphExecDestroy(x)
		}
		delete(e.graphs.byKey, oldest)
	}
}

// dropGraphs destroys every recorded graph (they bake in the scratch
// arena's address, so growing it invalidates them; and at Close). The
// stream must be idle.
func (e *Exec) dropGraphs() {
	for k, ent := range e.graphs.byKey {
		if ent.exec != 0 {
			e.b.dev.d.cuGraphExecDestroy(ent.exec)
		}
		delete(e.graphs.byKey, k)
	}
}

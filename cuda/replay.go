package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// A batch is a run of steps prepared on the host: every dispatch's
// patches checked, its launches worked out and its bindings checked
// against the kernel contract, so that issuing it, kernel by kernel or
// as one replay of a recorded CUDA graph, only queues work. Dispatches
// without patches launch the same kernels every step: their launches come
// from the launch table (table.go) and the batch holds only the others'.
// Kernel parameters are built when a launch is issued (launched or
// recorded), never for a replay.
type batch struct {
	passes  []int32     // row i: the pass of step i
	vars    []plan.Vars // row i: the variables of step i
	recs    []launchRec // the launches of dispatches with patches, by step and op
	consts  []constSet  // recs' function constants
	scratch uint64      // the largest per-dispatch scratch
	// halt is the chain's halt word for steps from haltFrom on (0: none;
	// plan.ChainHalt), with the value that means running.
	halt     dptr
	running  int32
	haltFrom int32
	// key is what a graph of the batch bakes in beyond the launch table:
	// per step its pass, per launch of a dispatch with patches its op,
	// function, geometry, per-dispatch scratch and constants (the rest of
	// a pass's launches follows from the pass). Two batches with equal
	// keys replay the same graph. Built only where graphs are on.
	key []byte
	// deepSplits counts its paged attention dispatches split for a deep
	// row (Exec.splitsDeep; CUDAStats.DeepSplits once issued)
	deepSplits int
}

// launchRec is one prepared launch.
type launchRec struct {
	fn      *kernelFunc
	name    string
	op      *plan.Dispatch // as planned (unresolved): its patches go to the graph
	step    int32          // row of the batch's step variables (0 in the launch table)
	opIdx   int32
	first   bool   // first launch of its dispatch: its parameter is built and the poison fill goes before it
	scratch uint32 // per-dispatch scratch bytes
	groups  [3]uint32
	threads [3]uint32
	shared  uint32
	c0, nc  int32 // constants: [c0, c0+nc) of the batch's or the table entry's
}

// constSet is a function constant resolved to its global, with the value
// a launch stores there.
type constSet struct {
	constGlobal
	value uint32
}

func (b *batch) reset() {
	b.passes, b.vars, b.recs, b.consts, b.key, b.scratch = b.passes[:0], b.vars[:0], b.recs[:0], b.consts[:0], b.key[:0], 0
	b.halt, b.running, b.haltFrom, b.deepSplits = 0, 0, 0, 0
}

// prepare adds step vars of pass to b (keyed: its key too). Errors name
// the plan, pass, op and kernel.
func (e *Exec) prepare(b *batch, pass int, vars *plan.Vars, keyed bool) error {
	step := len(b.vars)
	b.vars = append(b.vars, *vars)
	b.passes = append(b.passes, int32(pass))
	t := &e.table[pass]
	b.scratch = max(b.scratch, t.scratch)
	if keyed {
		b.key = binary.LittleEndian.AppendUint32(b.key, math.MaxUint32)
		b.key = binary.LittleEndian.AppendUint32(b.key, uint32(pass))
	}
	ops := e.passes[pass].Ops
	for _, i := range t.patched {
		if t.errOp >= 0 && t.errOp < i {
			break
		}
		if err := e.prepareOp(b, &t.ops[i], &ops[i], i, step, vars, keyed); err != nil {
			return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[pass].Name, i, ops[i].Kernel, err)
		}
	}
	if i := t.errOp; i >= 0 {
		return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[pass].Name, i, ops[i].Kernel, t.ops[i].err)
	}
	return nil
}

// splitsDeep reports whether r launches with splitDeep rather than
// e.tuning: a batch step's paged attention when the step's deepest row
// reads more keys than a split chunk (plan.VarKVLen: llm.Batch.Step sets
// it to the deepest row's position + 1). The split's grid is sized for
// the table's keys, so it costs a step of short rows (decode streams: 7%
// at 16 rows) the launch of chunks that return at once, while a row
// thousands of keys deep (a long prompt's chunk beside the streams)
// walks its keys on 8-16 threadgroups instead of one (BENCHMARKS.md,
// b38: 4 such rows beside 4 streams 6.28 -> 3.79 ms a step on an H200).
func (e *Exec) splitsDeep(r *plan.Dispatch, vars *plan.Vars) bool {
	return e.splitDeep != nil && r.Kernel == plan.AttentionPaged && vars[plan.VarKVLen] > int64(e.splitDeep.AttnPagedChunk)
}

// prepareOp checks and records one dispatch with patches at step vars:
// the patches, then what addLaunches checks.
func (e *Exec) prepareOp(b *batch, t *opTable, op *plan.Dispatch, opIdx, step int, vars *plan.Vars, keyed bool) error {
	for _, p := range op.Patch[:op.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		if v < 0 || (p.Target < plan.PatchOffset0 && v > math.MaxUint32) {
			return fmt.Errorf("patch of field %d gives %d (variable %d = %d)", p.Target, v, p.Var, vars[p.Var])
		}
	}
	r := op.Resolved(vars)
	var err error
	tn := &e.tuning
	if e.splitsDeep(&r, vars) {
		tn = e.splitDeep
		b.deepSplits++
	}
	if e.launches, err = shaders.LaunchFor(&r, tn, e.launches[:0]); err != nil {
		return err
	}
	if err := shaders.ForLayouts(e.layouts, &r, e.launches); err != nil {
		return err
	}
	n0 := len(b.recs)
	scratch, err := e.addLaunches(&r, op, opIdx, e.launches, t, &b.recs, &b.consts)
	if err != nil {
		return err
	}
	b.scratch = max(b.scratch, scratch)
	for i := range b.recs[n0:] {
		b.recs[n0+i].step = int32(step)
	}
	if !keyed {
		return nil
	}
	k := b.key
	for _, rec := range b.recs[n0:] {
		k = binary.LittleEndian.AppendUint32(k, uint32(opIdx))
		k = binary.LittleEndian.AppendUint64(k, uint64(rec.fn.h))
		for _, v := range [...]uint32{rec.groups[0], rec.groups[1], rec.groups[2], rec.threads[0], rec.threads[1], rec.threads[2],
			rec.shared, rec.scratch, uint32(rec.nc)} {
			k = binary.LittleEndian.AppendUint32(k, v)
		}
		for _, c := range b.consts[rec.c0 : rec.c0+rec.nc] {
			k = binary.LittleEndian.AppendUint64(k, c.ptr)
			k = binary.LittleEndian.AppendUint32(k, c.value)
		}
	}
	b.key = k
	return nil
}

// addLaunches checks resolved dispatch r (op as planned) and appends its
// launches ls: the bounds of every binding against the kernel contract
// (a GPU kernel checks none), each launch's function limits and function
// constants. It returns the per-dispatch scratch.
func (e *Exec) addLaunches(r, op *plan.Dispatch, opIdx int, ls []shaders.Launch, t *opTable, recs *[]launchRec, consts *[]constSet) (uint64, error) {
	if len(ls) == 0 {
		return 0, nil
	}
	if err := e.checkBounds(r); err != nil {
		return 0, err
	}
	var scratch uint64
	for _, l := range ls {
		scratch = max(scratch, uint64(l.Scratch))
	}
	first := true
	for li := range ls {
		l := &ls[li]
		f, err := t.function(e.b.dev, li, l.Function)
		if err != nil {
			return 0, err
		}
		threads := uint64(l.Threads[0]) * uint64(l.Threads[1]) * uint64(l.Threads[2])
		if threads == 0 || l.Groups[0] == 0 || l.Groups[1] == 0 || l.Groups[2] == 0 {
			continue // empty grid
		}
		if threads > uint64(f.maxThreads) {
			return 0, fmt.Errorf("%s: %d threads per threadgroup, the function allows %d", l.Function, threads, f.maxThreads)
		}
		if l.Tickets > shaders.TicketWords {
			return 0, fmt.Errorf("%s: %d ticket words, the host has %d", l.Function, l.Tickets, shaders.TicketWords)
		}
		shared := (l.Threadgroup + 15) &^ 15
		if ok, err := e.b.dev.sharedFits(f, l.Function, shared); err != nil {
			return 0, err
		} else if !ok {
			return 0, fmt.Errorf("%s: %d bytes of threadgroup memory, the GPU allows %d beside the function's %d static bytes", l.Function, shared, max(f.dynSet.Load(), uint32(max(e.b.dev.info.MaxSharedOptin-int(f.static), 0))), f.static)
		}
		c0 := len(*consts)
		for _, c := range l.Constants {
			g, ok := e.b.dev.consts[c.Index]
			if !ok {
				return 0, fmt.Errorf("%s: no function constant with index %d", l.Function, c.Index)
			}
			*consts = append(*consts, constSet{g, c.Value})
		}
		*recs = append(*recs, launchRec{fn: f, name: l.Function, op: op, opIdx: int32(opIdx), first: first, scratch: uint32(scratch),
			groups: l.Groups, threads: l.Threads, shared: shared, c0: int32(c0), nc: int32(len(l.Constants))})
		first = false
	}
	return scratch, nil
}

// issue queues the batch's launches kernel by kernel on the stream
// (replay false: the host-resolved parameters) or records them on the
// capture stream, which is capturing a graph (replay true: kernels that
// have patches read the step variables from their step's row of the step
// buffer). Each step's launches are its pass's in op order: the table's
// for dispatches without patches, the batch's for the others.
func (e *Exec) issue(b *batch, replay bool) error {
	prof := !replay && e.b.opt.Profile
	marked := false // the first event goes before the first launch
	e.stored = e.stored[:0]
	e.afterKernel = false // copies or a graph launch may come before
	next := 0
	for s := range b.vars {
		t := &e.table[b.passes[s]]
		for i := range t.ops {
			ot := &t.ops[i]
			recs, consts := ot.recs, ot.consts
			if !ot.fixed {
				n := next
				for n < len(b.recs) && b.recs[n].step == int32(s) && b.recs[n].opIdx == int32(i) {
					n++
				}
				recs, consts, next = b.recs[next:n], b.consts, n
			}
			for j := range recs {
				rec := &recs[j]
				if prof && !marked {
					if err := e.mark(""); err != nil {
						return err
					}
					marked = true
				}
				halt, running := b.haltAt(s)
				err := e.issueRec(rec, consts, s, &b.vars[s], replay, halt, running)
				if err == nil && prof {
					err = e.mark(rec.name)
				}
				if err != nil {
					return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[b.passes[s]].Name, rec.opIdx, rec.op.Kernel, err)
				}
			}
		}
	}
	return nil
}

// haltAt is the halt word's address and running value for step s of b
// (0: none).
func (b *batch) haltAt(s int) (dptr, int32) {
	if b.halt == 0 || int32(s) < b.haltFrom {
		return 0, 0
	}
	return b.halt, b.running
}

func (e *Exec) issueRec(rec *launchRec, consts []constSet, step int, vars *plan.Vars, replay bool, halt dptr, running int32) error {
	dev := e.b.dev
	d := dev.d
	stream := dev.stream
	if replay {
		stream = dev.capture
	}
	if rec.first {
		e.buildParams(rec.op, vars)
	}
	e.prm = e.opPrm
	e.prm.halt, e.prm.running = halt, running
	if e.b.opt.PermuteSeed != 0 {
		e.prm.perm = e.b.permutation(rec.groups)
	}
	if rec.scratch > 0 {
		e.prm.bufs[shaders.ScratchIndex] = e.arena
		if rec.first && e.b.opt.Poison {
			if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.arena, 0xff, uint64(rec.scratch), stream)); err != nil {
				return err
			}
			e.afterKernel = false
		}
	}
	if err := e.storeConstants(consts[rec.c0:rec.c0+rec.nc], stream); err != nil {
		return fmt.Errorf("%s: %w", rec.name, err)
	}
	if replay {
		e.patchParams(rec, step)
	}
	overlap := rec.fn.pdl && e.afterKernel && e.pdl
	var r result
	if overlap {
		r = e.launchOverlapped(rec, stream)
	} else {
		r = d.cuLaunchKernel(rec.fn.h, rec.groups[0], rec.groups[1], rec.groups[2], rec.threads[0], rec.threads[1], rec.threads[2],
			rec.shared, stream, &e.prmPtr, nil)
	}
	if err := d.err(map[bool]string{false: "cuLaunchKernel", true: "cuLaunchKernelEx"}[overlap], r); err != nil {
		return fmt.Errorf("%s (%v groups of %v threads, %d bytes shared): %w", rec.name, rec.groups, rec.threads, rec.shared, err)
	}
	e.afterKernel = true
	if overlap {
		e.stats.Overlapped++
	}
	if replay {
		e.stats.Recorded++
	} else {
		e.stats.KernelLaunches++
	}
	return nil
}

// buildParams sets e.opPrm to the kernel parameter of dispatch op at step
// vars, as resolved on the host: the bindings' addresses (the dummy for
// absent ones) and the Args block.
func (e *Exec) buildParams(op *plan.Dispatch, vars *plan.Vars) {
	r := op.Resolved(vars)
	pr := &e.opPrm
	*pr = params{}
	for i := range pr.bufs {
		pr.bufs[i] = e.dummy
	}
	pr.bufs[shaders.TicketIndex] = e.tickets
	for j := 0; j < int(r.NBind); j++ {
		if bd := r.Bind[j]; bd.Buf != plan.NoBuf {
			pr.bufs[j] = e.ptrs[bd.Buf] + bd.Off
		}
	}
	shaders.Args(&r, &e.argb)
	for i := range pr.args {
		pr.args[i] = binary.LittleEndian.Uint32(e.argb[4*i:])
	}
	e.paramsBuilt++
}

// permutation draws a launch's block permutation (Options.PermuteSeed):
// block i runs as block (a*i + c) mod n, a coprime to n.
func (b *Backend) permutation(groups [3]uint32) [2]uint32 {
	n := uint64(groups[0]) * uint64(groups[1]) * uint64(groups[2])
	if n <= 1 || n >= 1<<32 {
		return [2]uint32{}
	}
	b.rngMu.Lock()
	defer b.rngMu.Unlock()
	a := uint64(1 + b.rng.Uint64N(n-1))
	for gcd(a, n) != 1 {
		a = 1 + b.rng.Uint64N(n-1)
	}
	return [2]uint32{uint32(a), uint32(b.rng.Uint64N(n))}
}

// patchParams turns e.prm, a copy of rec's host-resolved parameters, into
// the parameters a graph records: a dispatch with patches gets the
// address of its step's variables and the patches, and a patched binding
// its buffer's base (the kernel adds the offset). The host-resolved
// values left in the Args are overwritten by the kernel.
func (e *Exec) patchParams(rec *launchRec, step int) {
	op := rec.op
	if op.NPatch == 0 {
		return
	}
	pr := &e.prm
	pr.step = e.stepDev + uint64(step)*uint64(unsafe.Sizeof(plan.Vars{}))
	n := 0
	for _, p := range op.Patch[:op.NPatch] {
		if p.Target >= plan.PatchOffset0 {
			bd := op.Bind[p.Target-plan.PatchOffset0]
			if bd.Buf == plan.NoBuf {
				continue // bound to the dummy, whose offset stays 0, as on the host
			}
			pr.bufs[p.Target-plan.PatchOffset0] = e.ptrs[bd.Buf]
		}
		pr.patch[n] = devPatch{base: p.Base, mul: p.Mul, target: uint32(p.Target), vr: uint32(p.Var)}
		n++
	}
	pr.npatch = uint32(n)
}

// storeConstants queues the stores of a launch's function constants
// whose values differ from what the batch stored last (e.stored, emptied
// at the start of every issue, so a batch and the graph recorded from it
// store each constant before its first use whatever ran before). Each
// store is a memset on the stream, a node of its own in a graph that the
// next kernel waits for: decode stored three mat-vec constants before
// nearly every launch, all but a few a layer with the value already there
// (issue #34). Options.AllConstants stores them all, as before.
func (e *Exec) storeConstants(cs []constSet, stream uintptr) error {
	for _, c := range cs {
		i := 0
		for i < len(e.stored) && e.stored[i].ptr != c.ptr {
			i++
		}
		if i < len(e.stored) && e.stored[i].value == c.value && !e.b.opt.AllConstants {
			continue
		}
		if err := e.setConstant(c, stream); err != nil {
			return err
		}
		e.afterKernel = false
		if i == len(e.stored) {
			e.stored = append(e.stored, c)
		}
		e.stored[i].value = c.value
	}
	return nil
}

// setConstant queues the store of a function constant's value: a memset
// of the value itself (1, 2 or 4 bytes), which a graph records by value.
func (e *Exec) setConstant(c constSet, stream uintptr) error {
	d := e.b.dev.d
	switch c.size {
	case 1:
		v := uint8(0)
		if c.value != 0 {
			v = 1 // the one-byte constants are bools
		}
		return d.err("cuMemsetD8Async", d.cuMemsetD8Async(c.ptr, v, 1, stream))
	case 2:
		return d.err("cuMemsetD16Async", d.cuMemsetD16Async(c.ptr, uint16(c.value), 1, stream))
	case 4:
		return d.err("cuMemsetD32Async", d.cuMemsetD32Async(c.ptr, c.value, 1, stream))
	}
	return fmt.Errorf("function constant %s has %d bytes", c.name, c.size)
}

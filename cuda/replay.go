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
// as one replay of a recorded CUDA graph, only queues work.
type batch struct {
	recs    []launchRec
	consts  []shaders.Constant
	vars    []plan.Vars // row i: the variables of step i
	scratch uint64      // the largest per-dispatch scratch
	// key is everything a graph of the batch bakes in except what the
	// step variables patch (those the kernels read from the step rows):
	// per step its pass, per launch its op, function, geometry,
	// per-dispatch scratch, constants and block permutation. Two batches
	// with equal keys replay the same graph.
	key []byte
}

// launchRec is one prepared launch.
type launchRec struct {
	fn      *kernelFunc
	name    string
	op      *plan.Dispatch // as planned (unresolved): its patches go to the graph
	step    int32          // row of the batch's step variables
	pass    int32
	opIdx   int32
	first   bool   // first launch of its dispatch: the poison fill goes before it
	scratch uint32 // per-dispatch scratch bytes
	groups  [3]uint32
	threads [3]uint32
	shared  uint32
	c0, nc  int32 // constants: b.consts[c0 : c0+nc]
	prm     params
}

func (b *batch) reset() {
	b.recs, b.consts, b.vars, b.key, b.scratch = b.recs[:0], b.consts[:0], b.vars[:0], b.key[:0], 0
}

// prepare adds step vars of pass to b. Errors name the plan, pass, op and
// kernel.
func (e *Exec) prepare(b *batch, pass int, vars *plan.Vars) error {
	step := len(b.vars)
	b.vars = append(b.vars, *vars)
	b.key = binary.LittleEndian.AppendUint32(b.key, math.MaxUint32)
	b.key = binary.LittleEndian.AppendUint32(b.key, uint32(pass))
	ops := e.passes[pass].Ops
	for i := range ops {
		if err := e.prepareOp(b, pass, &ops[i], i, step, vars); err != nil {
			return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[pass].Name, i, ops[i].Kernel, err)
		}
	}
	return nil
}

// prepareOp checks and records one dispatch: patches, launches, the
// bounds of every binding against the kernel contract (a GPU kernel
// checks none), per-dispatch scratch, each launch's function limits.
func (e *Exec) prepareOp(b *batch, pass int, op *plan.Dispatch, opIdx, step int, vars *plan.Vars) error {
	for _, p := range op.Patch[:op.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		if v < 0 || (p.Target < plan.PatchOffset0 && v > math.MaxUint32) {
			return fmt.Errorf("patch of field %d gives %d (variable %d = %d)", p.Target, v, p.Var, vars[p.Var])
		}
	}
	r := op.Resolved(vars)
	var err error
	if e.launches, err = shaders.LaunchFor(&r, &e.tuning, e.launches[:0]); err != nil {
		return err
	}
	if len(e.launches) == 0 {
		return nil
	}
	if err := e.checkBounds(&r); err != nil {
		return err
	}
	var scratch uint64
	for _, l := range e.launches {
		scratch = max(scratch, uint64(l.Scratch))
	}
	b.scratch = max(b.scratch, scratch)
	var pr params
	for i := range pr.bufs {
		pr.bufs[i] = e.dummy
	}
	for j := 0; j < int(r.NBind); j++ {
		if bd := r.Bind[j]; bd.Buf != plan.NoBuf {
			pr.bufs[j] = e.ptrs[bd.Buf] + bd.Off
		}
	}
	shaders.Args(&r, &e.argb)
	for i := range pr.args {
		pr.args[i] = binary.LittleEndian.Uint32(e.argb[4*i:])
	}
	first := true
	for li := range e.launches {
		l := &e.launches[li]
		f, err := e.b.dev.function(l.Function)
		if err != nil {
			return err
		}
		threads := uint64(l.Threads[0]) * uint64(l.Threads[1]) * uint64(l.Threads[2])
		if threads == 0 || l.Groups[0] == 0 || l.Groups[1] == 0 || l.Groups[2] == 0 {
			continue // empty grid
		}
		if threads > uint64(f.maxThreads) {
			return fmt.Errorf("%s: %d threads per threadgroup, the function allows %d", l.Function, threads, f.maxThreads)
		}
		shared := (l.Threadgroup + 15) &^ 15
		if shared > f.dynSet {
			return fmt.Errorf("%s: %d bytes of threadgroup memory, the GPU allows %d beside the function's %d static bytes", l.Function, shared, f.dynSet, f.static)
		}
		for _, c := range l.Constants {
			if _, ok := e.b.dev.consts[c.Index]; !ok {
				return fmt.Errorf("%s: no function constant with index %d", l.Function, c.Index)
			}
		}
		rec := launchRec{fn: f, name: l.Function, op: op, step: int32(step), pass: int32(pass), opIdx: int32(opIdx), first: first, scratch: uint32(scratch),
			groups: l.Groups, threads: l.Threads, shared: shared,
			c0: int32(len(b.consts)), nc: int32(len(l.Constants)), prm: pr}
		first = false
		b.consts = append(b.consts, l.Constants...)
		if e.b.opt.PermuteSeed != 0 {
			n := uint64(l.Groups[0]) * uint64(l.Groups[1]) * uint64(l.Groups[2])
			if n > 1 && n < 1<<32 {
				e.b.rngMu.Lock()
				a := uint64(1 + e.b.rng.Uint64N(n-1))
				for gcd(a, n) != 1 {
					a = 1 + e.b.rng.Uint64N(n-1)
				}
				rec.prm.perm = [2]uint32{uint32(a), uint32(e.b.rng.Uint64N(n))}
				e.b.rngMu.Unlock()
			}
		}
		b.recs = append(b.recs, rec)
		k := b.key
		k = binary.LittleEndian.AppendUint32(k, uint32(opIdx))
		k = binary.LittleEndian.AppendUint64(k, uint64(f.h))
		for _, v := range [...]uint32{l.Groups[0], l.Groups[1], l.Groups[2], l.Threads[0], l.Threads[1], l.Threads[2],
			shared, uint32(scratch), rec.prm.perm[0], rec.prm.perm[1], uint32(len(l.Constants))} {
			k = binary.LittleEndian.AppendUint32(k, v)
		}
		for _, c := range l.Constants {
			k = binary.LittleEndian.AppendUint32(k, uint32(c.Index))
			k = binary.LittleEndian.AppendUint32(k, c.Value)
		}
		b.key = k
	}
	return nil
}

// issue queues the batch's launches kernel by kernel on the stream
// (replay false: the host-resolved parameters) or records them on the
// capture stream, which is capturing a graph (replay true: kernels that
// have patches read the step variables from row rec.step of the step
// buffer).
func (e *Exec) issue(b *batch, replay bool) error {
	prof := !replay && e.b.opt.Profile
	if prof && len(b.recs) > 0 {
		if err := e.mark(""); err != nil {
			return err
		}
	}
	for i := range b.recs {
		rec := &b.recs[i]
		err := e.issueRec(b, rec, replay)
		if err == nil && prof {
			err = e.mark(rec.name)
		}
		if err != nil {
			return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, e.passes[rec.pass].Name, rec.opIdx, rec.op.Kernel, err)
		}
	}
	return nil
}

func (e *Exec) issueRec(b *batch, rec *launchRec, replay bool) error {
	dev := e.b.dev
	d := dev.d
	stream := dev.stream
	if replay {
		stream = dev.capture
	}
	if rec.scratch > 0 {
		rec.prm.bufs[shaders.ScratchIndex] = e.arena
		if rec.first && e.b.opt.Poison {
			if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(e.arena, 0xff, uint64(rec.scratch), stream)); err != nil {
				return err
			}
		}
	}
	for _, c := range b.consts[rec.c0 : rec.c0+rec.nc] {
		if err := e.setConstant(c, stream); err != nil {
			return fmt.Errorf("%s: %w", rec.name, err)
		}
	}
	e.prm = rec.prm
	if replay {
		e.patchParams(rec)
	}
	r := d.cuLaunchKernel(rec.fn.h, rec.groups[0], rec.groups[1], rec.groups[2], rec.threads[0], rec.threads[1], rec.threads[2],
		rec.shared, stream, &e.prmPtr, nil)
	if err := d.err("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("%s (%v groups of %v threads, %d bytes shared): %w", rec.name, rec.groups, rec.threads, rec.shared, err)
	}
	if replay {
		e.stats.Recorded++
	} else {
		e.stats.KernelLaunches++
	}
	return nil
}

// patchParams turns e.prm, a copy of rec's host-resolved parameters, into
// the parameters a graph records: a dispatch with patches gets the
// address of its step's variables and the patches, and a patched binding
// its buffer's base (the kernel adds the offset). The host-resolved
// values left in the Args are overwritten by the kernel.
func (e *Exec) patchParams(rec *launchRec) {
	op := rec.op
	if op.NPatch == 0 {
		return
	}
	pr := &e.prm
	pr.step = e.stepDev + uint64(rec.step)*uint64(unsafe.Sizeof(plan.Vars{}))
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

// setConstant queues the store of a function constant's value: a memset
// of the value itself (1, 2 or 4 bytes), which a graph records by value.
func (e *Exec) setConstant(c shaders.Constant, stream uintptr) error {
	dev := e.b.dev
	d := dev.d
	g := dev.consts[c.Index]
	switch g.size {
	case 1:
		v := uint8(0)
		if c.Value != 0 {
			v = 1 // the one-byte constants are bools
		}
		return d.err("cuMemsetD8Async", d.cuMemsetD8Async(g.ptr, v, 1, stream))
	case 2:
		return d.err("cuMemsetD16Async", d.cuMemsetD16Async(g.ptr, uint16(c.Value), 1, stream))
	case 4:
		return d.err("cuMemsetD32Async", d.cuMemsetD32Async(g.ptr, c.Value, 1, stream))
	}
	return fmt.Errorf("function constant %s has %d bytes", g.name, g.size)
}

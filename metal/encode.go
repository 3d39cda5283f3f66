package metal

import (
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// encodeState is the bookkeeping of one compute encoder: what is bound
// (to skip redundant calls, each of which is an Objective-C message), the
// hazards since the last barrier, the per-dispatch scratch bump pointer and
// reusable slices, so encoding allocates nothing.
type encodeState struct {
	enc      encoder
	pipe     handle
	bound    [shaders.ScratchIndex + 1]devBind
	isBound  [shaders.ScratchIndex + 1]bool
	hz       plan.Hazards
	acc      []plan.Span
	launches []shaders.Launch
	args     [shaders.ArgsSize]byte
	d        plan.Dispatch // the resolved dispatch (kept here so it does not escape per op)
	bulkH    [plan.MaxBind]handle
	bulkOff  [plan.MaxBind]uint64
	arenaOff uint64 // bump pointer into the arena for the current step
}

// opMemo remembers the pipelines of a dispatch's last launches: a plan
// dispatch almost always resolves to the same functions, and comparing
// with the last one is much cheaper than hashing the pipeline key.
type opMemo [2]struct {
	key pipeKey
	p   pipeline
	ok  bool
}

func (m *opMemo) pipeline(e *Exec, li int, l *shaders.Launch) (pipeline, error) {
	if li >= len(m) || len(l.Constants) > maxConstants {
		return e.pipelineFor(l)
	}
	c := &m[li]
	if c.ok && c.key.fn == l.Function && c.key.n == len(l.Constants) {
		same := true
		for i, k := range l.Constants {
			same = same && c.key.c[i] == k
		}
		if same {
			return c.p, nil
		}
	}
	p, err := e.pipelineFor(l)
	if err != nil {
		return p, err
	}
	c.key = pipeKey{fn: l.Function, n: len(l.Constants)}
	copy(c.key.c[:], l.Constants)
	c.p, c.ok = p, true
	return p, nil
}

// arenaAlign aligns per-dispatch scratch regions.
const arenaAlign = 256

func (s *encodeState) begin(enc encoder) {
	s.enc, s.pipe = enc, 0
	s.isBound = [len(s.isBound)]bool{}
	s.hz.Reset()
}

// bindAll binds want[i] at index i: nothing when all are bound already,
// one setBuffer or setBufferOffset when one changed, else one setBuffers
// message over the range of changed indices (rebinding the unchanged ones
// inside it costs nothing extra).
func (s *encodeState) bindAll(want []devBind) {
	lo, hi, n := -1, -1, 0
	for i, w := range want {
		if s.isBound[i] && s.bound[i] == w {
			continue
		}
		if lo < 0 {
			lo = i
		}
		hi = i
		n++
	}
	switch {
	case n == 0:
		return
	case n == 1:
		s.setBuffer(devBind{h: want[lo].h}, want[lo].base, lo)
		return
	}
	for i := lo; i <= hi; i++ {
		s.bulkH[i-lo], s.bulkOff[i-lo] = want[i].h, want[i].base
		s.bound[i], s.isBound[i] = want[i], true
	}
	s.enc.setBuffers(s.bulkH[:hi-lo+1], s.bulkOff[:hi-lo+1], lo)
}

func (s *encodeState) setBuffer(b devBind, off uint64, index int) {
	switch {
	case s.isBound[index] && s.bound[index].h == b.h && s.bound[index].base == off:
	case s.isBound[index] && s.bound[index].h == b.h:
		s.enc.setBufferOffset(off, index)
	default:
		s.enc.setBuffer(b.h, off, index)
	}
	s.bound[index], s.isBound[index] = devBind{h: b.h, base: off}, true
}

// encodeStep encodes one replay of pass with vars into the current
// encoder.
func (e *Exec) encodeStep(pass int, vars *plan.Vars) error {
	s := &e.enc
	s.arenaOff = 0
	ops := e.passes[pass].Ops
	memo := e.memo[pass]
	for i := range ops {
		if err := e.encodeOp(&ops[i], &memo[i], vars); err != nil {
			return fmt.Errorf("metal: %s/%s op %d (%s): %w", e.name, e.passes[pass].Name, i, ops[i].Kernel, err)
		}
	}
	e.stats.Steps++
	return nil
}

func (e *Exec) encodeOp(op *plan.Dispatch, memo *opMemo, vars *plan.Vars) error {
	s := &e.enc
	for _, p := range op.Patch[:op.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		if v < 0 || (p.Target.IsParam() && v > math.MaxUint32) {
			return fmt.Errorf("patch of field %d gives %d (variable %d = %d)", p.Target, v, p.Var, vars[p.Var])
		}
	}
	s.d = op.Resolved(vars)
	d := &s.d
	var err error
	s.launches, err = e.launch(d, &e.tuning, s.launches[:0])
	if err != nil {
		return err
	}
	if len(s.launches) == 0 {
		return nil
	}

	// Bounds: a GPU kernel does not check its bindings, so every extent
	// the contract implies must fit its buffer here.
	s.acc = d.Spans(e.sizes, s.acc[:0])
	for _, a := range s.acc {
		if a.Hi > e.sizes[a.Buf] {
			return fmt.Errorf("binding of buffer %q: bytes [%d, %d) overrun its %d bytes", e.plan.Buffers[a.Buf].Name, a.Lo, a.Hi, e.sizes[a.Buf])
		}
	}
	var scratch uint64
	for _, l := range s.launches {
		scratch = max(scratch, uint64(l.Scratch))
	}
	var scratchOff uint64
	if scratch > 0 {
		scratchOff = s.arenaOff
		s.arenaOff += (scratch + arenaAlign - 1) &^ (arenaAlign - 1)
		if err := e.ensureArena(s.arenaOff); err != nil {
			return err
		}
		s.acc = append(s.acc, plan.Span{Buf: arenaBuf, Lo: scratchOff, Hi: scratchOff + scratch, Read: true, Write: true})
	}
	if s.hz.Add(s.acc) {
		s.enc.barrier()
		e.stats.Barriers++
	}

	var want [plan.MaxBind]devBind
	for j := 0; j < int(d.NBind); j++ {
		b := d.Bind[j]
		if b.Buf == plan.NoBuf {
			want[j] = devBind{h: e.dummy.h}
			continue
		}
		db := e.binds[b.Buf]
		want[j] = devBind{h: db.h, base: db.base + b.Off}
	}
	s.bindAll(want[:d.NBind])
	shaders.Args(d, &s.args)
	s.enc.setBytes(&s.args, shaders.ArgsIndex)
	if scratch > 0 {
		s.setBuffer(devBind{h: e.arena.h}, scratchOff, shaders.ScratchIndex)
	}
	for li := range s.launches {
		l := &s.launches[li]
		if li > 0 {
			// Later launches of a dispatch read what earlier ones wrote
			// (argmax partials, split-KV partials).
			s.enc.barrier()
			e.stats.Barriers++
			s.hz.Reset()
			s.hz.Add(s.acc)
		}
		pl, err := memo.pipeline(e, li, l)
		if err != nil {
			return err
		}
		threads := uint64(l.Threads[0]) * uint64(l.Threads[1]) * uint64(l.Threads[2])
		if threads == 0 || l.Groups[0] == 0 || l.Groups[1] == 0 || l.Groups[2] == 0 {
			continue // empty grid: nothing to run
		}
		if threads > uint64(pl.maxThreads) {
			return fmt.Errorf("%s: %d threads per threadgroup, the pipeline allows %d", l.Function, threads, pl.maxThreads)
		}
		if l.Tickets > 0 {
			// the Apple families keep Tuning.AttnTicket off: no buffer at
			// shaders.TicketIndex here yet
			return fmt.Errorf("%s: takes %d ticket words, and the Metal host binds no ticket buffer", l.Function, l.Tickets)
		}
		if pl.h != s.pipe {
			s.enc.setPipeline(pl.h)
			s.pipe = pl.h
		}
		if l.Threadgroup > 0 {
			tg := (l.Threadgroup + 15) &^ 15
			if e.maxTG > 0 && tg > e.maxTG {
				return fmt.Errorf("%s: %d bytes of threadgroup memory, the device has %d", l.Function, tg, e.maxTG)
			}
			s.enc.setThreadgroupMemory(tg, 0)
		}
		s.enc.dispatch(l.Groups, l.Threads)
		e.stats.Launches++
	}
	e.stats.Dispatches++
	return nil
}

// ensureArena grows the per-dispatch scratch arena to at least n bytes.
// The old arena stays alive as long as a committed command buffer uses it
// (Metal retains the buffers of a command buffer).
func (e *Exec) ensureArena(n uint64) error {
	if e.arena.h != 0 && uint64(e.arena.size) >= n {
		return nil
	}
	size := max(n, 2*uint64(e.arena.size), 64<<10)
	b, err := e.dev.newBuffer(int64(size), private)
	if err != nil {
		return fmt.Errorf("per-dispatch scratch of %d bytes: %w", size, err)
	}
	if e.arena.h != 0 {
		e.dev.release(e.arena)
	}
	e.arena = b
	// The arena changed under bindings made earlier in this encoder.
	e.enc.isBound[shaders.ScratchIndex] = false
	return nil
}

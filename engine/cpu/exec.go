package cpu

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Exec is a plan loaded on the CPU backend; it implements plan.Executable.
// Calls are serialised: one step runs at a time.
type Exec struct {
	plan.StepRunner // Run and RunSeq: ready, then runPass, under mu
	mu              sync.Mutex
	pool            *Pool
	pri             *atomic.Int32 // priority of the passes on the pool (admit.go)
	mm              *MatMul
	name            string
	bufs            []buffer
	passes          []compiledPass
	closed          bool
	serial          bool  // tests: fence before every dispatch
	packed          int   // weight bytes repacked at load for the row kernels (repack.go)
	arena           spare // the Scratch buffers (arena.go)
	keysWritten     int   // a chunk's keys in the cache (chunk.go); -1 outside chunks
	chunkRows       int64 // Options.ChunkRows (0: steps run whole)
	arenaTouched    int64 // the bytes of it the passes touch
	released        int64 // bytes of packed originals released (releasePages)
	// drops are the arena's ranges each pass gives back (nil: none),
	// pending the pass whose ranges go when another pass runs (-1: none),
	// dropped the bytes given back so far, nDrops the passes that gave
	// them (arena_release.go)
	drops   [][][2]int64
	pending int
	dropped int64
	nDrops  int

	// position of the running dispatch, for error messages
	curPass, curOp int
	curKernel      plan.Kernel
	// stop is the running pass's context under RunCtx (nil otherwise):
	// checked before each dispatch
	stop context.Context

	// scratch sized at load from the plan's static parameters
	act     []float32   // fused activation rows and conv1d im2col tiles
	attnScr []float32   // packed K, transposed V and scores of attentionGEMM, in attn
	attn    spare       // attnScr's memory, given back after a prefill (arena_release.go)
	wsf     [][]float32 // per-worker rows (attention scores, rope angles, embed rows)
	wss     [][]kvSpan  // per-worker spans (single-query attention over an f16 cache)
	sorter  candSorter
	order   sampleOrder // the Sample kernel's walks without top-k
	scaled  sampleScale // its temperature pass
	// settings is the Sample kernel's decoded step data (its bias slices
	// reused)
	settings plan.SampleSettings
	drawSeen []bool // checkDraws' slots, reused: a step's draws allocate nothing
	beamRow  []byte // BeamCopy's saved source rows, grown to seqs rows
	align    alignBufs

	// kernel tasks, reused by every dispatch so the pool needs no allocation
	embedT     embedTask
	normT      normTask
	ewT        ewTask
	ropeT      ropeTask
	attnT      attnTask
	pagedRopeT pagedRopeTask
	pagedAttnT pagedAttnTask
	pagedSpans atomic.Int64 // pagedAttnTask's table look-ups, all dispatches (tests)
	smT        softmaxTask
	colT       im2colTask
	packT      attnPackTask
	attnSoftT  attnSoftTask
	wideT      attnWideTask
	rowR       rowReduce // one long row's filters, log-sum-exp and argmax (rowreduce.go)
	rowFills   [][2]int  // WhisperFilter's timestamp rules' ranges
	memo       rowMemo   // WhisperFilter's row, for the Argmax and WhisperTrack after it
	packB      attnPackRows
	blockT     attnBlockTask
}

type compiledPass struct {
	name  string
	ops   []plan.Dispatch
	fence []bool     // ops[i] waits for the jobs in flight (fences)
	runs  []chunkRun // stretches of ops run in chunks of rows (chunk.go)
}

// RunPasses implements plan.Chainer. The CPU has nothing to batch, so its
// default chunk is one step: a caller that stops early wastes no work.
func (e *Exec) RunPasses(passes []int, vars []plan.Vars, chunk int, done func(completed int) bool) (int, error) {
	if len(passes) != len(vars) {
		return 0, fmt.Errorf("cpu: %d passes for %d step variables", len(passes), len(vars))
	}
	if chunk <= 0 {
		chunk = 1
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range passes {
		if err := e.ready(passes[i]); err != nil {
			return i, err
		}
		if err := e.runPass(passes[i], &vars[i]); err != nil {
			return i, fmt.Errorf("step %d: %w", i, err)
		}
		if done != nil && ((i+1)%chunk == 0 || i+1 == len(passes)) {
			e.mu.Unlock()
			ok := done(i + 1)
			e.mu.Lock()
			if !ok {
				return i + 1, nil
			}
		}
	}
	return len(passes), nil
}

// RunCtx implements plan.Canceler.
func (e *Exec) RunCtx(ctx context.Context, pass int, vars *plan.Vars) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ready(pass); err != nil {
		return err
	}
	e.stop = ctx
	defer func() { e.stop = nil }()
	return e.runPass(pass, vars)
}

func (e *Exec) ready(pass int) error {
	if err := plan.CheckPass(e.name, e.closed, pass, len(e.passes)); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	return nil
}

// runPass runs a pass; what a pass alone needs is given back when
// another pass runs (arena_release.go).
func (e *Exec) runPass(pass int, vars *plan.Vars) error {
	e.dropBefore(pass)
	return e.runOps(pass, vars)
}

// RunJoined implements plan.Joiner: the passes run back to back as one
// pool pass (one admission, one Begin and End), so the workers go from
// one pass's last dispatch to the next pass's first without parking or
// being woken, and no other plan's pass comes between: a batch step and
// its draws (llm.Batch.StepSample) cost the pool what one pass does, as
// a single-sequence decode's would if it had no host work between its
// decode and sample passes. A pass checked out (closed executable, pass
// out of range) fails before any runs.
func (e *Exec) RunJoined(passes []int, vars []plan.Vars) error {
	if len(passes) != len(vars) {
		return fmt.Errorf("cpu: %d passes for %d step variables", len(passes), len(vars))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range passes {
		if err := e.ready(p); err != nil {
			return err
		}
	}
	e.enterPool()
	defer e.leavePool()
	for i, p := range passes {
		e.dropBefore(p)
		if err := e.ops(p, &vars[i]); err != nil {
			return fmt.Errorf("joined pass %d: %w", i, err)
		}
	}
	return nil
}

// runOps runs pass's dispatches as one pool pass.
func (e *Exec) runOps(pass int, vars *plan.Vars) error {
	e.enterPool()
	defer e.leavePool()
	return e.ops(pass, vars)
}

// enterPool starts a pool pass: the pool's gate admits it (by the
// backend's priority) and the workers are kept polling until leavePool.
func (e *Exec) enterPool() {
	e.pool.gate.admit(priorityOf(e.pri))
	e.pool.Begin()
}

// leavePool ends a pool pass: its last jobs fenced before the host
// reads, the pool handed to the next pass waiting.
func (e *Exec) leavePool() {
	e.pool.tagBarriers(0)
	e.pool.End()
	e.pool.gate.leave()
}

// ops runs pass's dispatches inside a pool pass (enterPool).
func (e *Exec) ops(pass int, vars *plan.Vars) error {
	var zero plan.Vars
	if vars == nil {
		vars = &zero
	}
	ops, fence := e.passes[pass].ops, e.passes[pass].fence
	e.curPass = pass
	e.memo = rowMemo{} // the host may have written the row
	runs := e.passes[pass].runs
	for i := 0; i < len(ops); i++ {
		if len(runs) > 0 && runs[0].first == i && vars[plan.VarNTok] > maxChunkRows(runs[0].rows) && vars[plan.VarKVLen] == vars[plan.VarPos]+vars[plan.VarNTok] {
			if err := e.runChunks(&runs[0], vars); err != nil {
				return err
			}
			i, runs = runs[0].last, runs[1:]
			continue
		}
		if len(runs) > 0 && runs[0].last == i {
			runs = runs[1:] // run whole: its rows fit one chunk
		}
		if e.stop != nil {
			if err := e.stop.Err(); err != nil {
				return err // the deferred End fences the jobs in flight
			}
		}
		e.curOp, e.curKernel = i, ops[i].Kernel
		if k := ops[i].Kernel; k != plan.Argmax && k != plan.WhisperTrack {
			e.memo = rowMemo{}
		}
		e.pool.tagBarriers(ops[i].Kernel)
		if fence[i] || e.serial {
			e.pool.Fence()
		}
		if err := e.checkPatches(&ops[i], vars); err != nil {
			return err
		}
		r := ops[i].Resolved(vars)
		if err := e.dispatch(&r); err != nil {
			return err
		}
	}
	return nil
}

// runChunks runs r in chunks of about r.rows rows (nextChunk), each
// dispatch after a fence (its rows come from the one before).
func (e *Exec) runChunks(r *chunkRun, vars *plan.Vars) error {
	defer func() { e.keysWritten = -1 }()
	rows := vars[plan.VarNTok]
	for c0 := int64(0); c0 < rows; {
		n := nextChunk(c0, rows, r.rows)
		cv := chunkVars(vars, c0, n)
		e.keysWritten = int(cv[plan.VarPos] + n)
		for k := range r.ops {
			if e.stop != nil {
				if err := e.stop.Err(); err != nil {
					return err
				}
			}
			e.curOp, e.curKernel = r.first+k, r.ops[k].Kernel
			e.pool.tagBarriers(r.ops[k].Kernel)
			e.pool.Fence()
			if err := e.checkPatches(&r.ops[k], &cv); err != nil {
				return err
			}
			d := r.chunk(k, &cv, c0)
			if err := e.dispatch(&d); err != nil {
				return err
			}
		}
		c0 += n
	}
	return nil
}

// checkPatches rejects patched values that Resolved would truncate: a
// negative or oversized position must fail, not wrap into a valid one.
func (e *Exec) checkPatches(d *plan.Dispatch, vars *plan.Vars) error {
	for _, p := range d.Patch[:d.NPatch] {
		v := p.Base + p.Mul*vars[p.Var]
		if v < 0 || (p.Target.IsParam() && v > math.MaxUint32) {
			return e.errf("patch of field %d gives %d (variable %d = %d)", p.Target, v, p.Var, vars[p.Var])
		}
	}
	return nil
}

func (e *Exec) dispatch(d *plan.Dispatch) error {
	switch d.Kernel {
	case plan.Embed:
		return e.embed(d)
	case plan.RMSNorm:
		return e.rmsNorm(d)
	case plan.LayerNorm:
		return e.layerNorm(d)
	case plan.MatVec, plan.MatMul:
		return e.matProduct(d)
	case plan.RMSNormMatVec:
		return e.rmsNormMatVec(d)
	case plan.LayerNormMatVec:
		return e.layerNormMatVec(d)
	case plan.SiLUMul:
		return e.binary(d, ewSiLUMul)
	case plan.SiLUMulMatVec:
		return e.gatedMatVec(d, ewSiLUMul)
	case plan.GELUMul:
		return e.binary(d, ewGELUMul)
	case plan.GELUMulMatVec:
		return e.gatedMatVec(d, ewGELUMul)
	case plan.GELU:
		return e.gelu(d)
	case plan.Add:
		return e.binary(d, ewAdd)
	case plan.Scale:
		return e.scale(d)
	case plan.Rope:
		return e.rope(d)
	case plan.RopeKV:
		return e.ropeKV(d)
	case plan.Attention:
		return e.attention(d)
	case plan.Softmax:
		return e.softmax(d)
	case plan.Conv1D:
		return e.conv1d(d)
	case plan.Argmax:
		return e.argmax(d)
	case plan.Sample:
		return e.sample(d)
	case plan.Copy:
		return e.copyOp(d)
	case plan.BeamCopy:
		return e.beamCopy(d)
	case plan.WhisperFilter:
		return e.whisperFilter(d)
	case plan.WhisperTrack:
		return e.whisperTrack(d)
	case plan.WhisperBeams:
		return e.whisperBeams(d)
	case plan.WhisperAlign:
		return e.whisperAlign(d)
	case plan.TokenLogprob:
		return e.tokenLogprob(d)
	case plan.RopeKVPaged:
		return e.ropeKVPaged(d)
	case plan.AttentionPaged:
		return e.attentionPaged(d)
	case plan.RopeAttention:
		return e.ropeAttention(d)
	case plan.RopeAttentionMatVec:
		return e.ropeAttentionMatVec(d)
	}
	return e.errf("unknown kernel %d", d.Kernel)
}

// errf wraps a kernel error with the plan position. It only runs on the
// error path, so its allocations do not count against a step.
func (e *Exec) errf(format string, a ...any) error {
	ps := ""
	if e.curPass < len(e.passes) {
		ps = e.passes[e.curPass].name
	}
	return fmt.Errorf("cpu: %s/%s op %d (%s): %s", e.name, ps, e.curOp, e.curKernel, fmt.Sprintf(format, a...))
}

// Write implements plan.Executable.
func (e *Exec) Write(buf plan.BufID, off int64, src []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.hostRange(buf, off, len(src), "write")
	if err != nil {
		return err
	}
	if b.kind == plan.BufWeights {
		return fmt.Errorf("cpu: plan %s: buffer %q holds weights and is read-only", e.name, b.name)
	}
	copy(b.b[off:], src)
	return nil
}

// Read implements plan.Executable.
func (e *Exec) Read(buf plan.BufID, off int64, dst []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, err := e.hostRange(buf, off, len(dst), "read")
	if err != nil {
		return err
	}
	copy(dst, b.b[off:])
	return nil
}

func (e *Exec) hostRange(buf plan.BufID, off int64, n int, what string) (*buffer, error) {
	if e.closed {
		return nil, fmt.Errorf("cpu: plan %s: executable is closed", e.name)
	}
	if int(buf) >= len(e.bufs) {
		return nil, fmt.Errorf("cpu: plan %s: %s of unknown buffer %d", e.name, what, buf)
	}
	b := &e.bufs[buf]
	if off < 0 || off > int64(len(b.b)) || int64(n) > int64(len(b.b))-off {
		return nil, fmt.Errorf("cpu: plan %s: %s of %d bytes at %d is outside buffer %q (%d bytes)", e.name, what, n, off, b.name, len(b.b))
	}
	return b, nil
}

// Close implements plan.Executable. Buffers are Go memory, so closing just
// drops them for the collector; the packed weights are unmapped.
func (e *Exec) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.pool.Fence() // no product may still read a pack
		e.mm.freePacks()
		e.mm.qact.free()
		e.arena.free()
		e.attn.free()
	}
	e.closed = true
	e.bufs, e.act, e.wsf, e.wss, e.attnScr = nil, nil, nil, nil, nil
	return nil
}

// BufferBytes exposes a buffer's memory for tests and tools on the same
// host; the bytes are only stable between steps.
func (e *Exec) BufferBytes(buf plan.BufID) []byte {
	if int(buf) >= len(e.bufs) {
		return nil
	}
	return e.bufs[buf].b
}

// ---- scratch ----

// allocScratch sizes the shared scratch from the static parameters of every
// dispatch. A patch that grows a shape past them makes the step allocate
// (ensureAct / ensureWorker), which is correct, just not free.
func (e *Exec) allocScratch() {
	act, ws, at := 0, 0, 0
	for _, ps := range e.passes {
		for i := range ps.ops {
			d := &ps.ops[i]
			a, w := scratchNeeds(d, e)
			act, ws = max(act, a), max(ws, w)
			if d.Kernel == plan.Attention {
				at = max(at, attnGEMMNeeds(d, attnKVCap(d, e), e.pool.Workers(), e.chunkRows > 0))
			}
		}
	}
	e.ensureAct(act)
	e.ensureWorker(ws)
	e.ensureAttn(at)
}

// scratchNeeds returns the shared activation and per-worker floats a
// dispatch uses with its static parameters, capped by what its buffers can
// hold so that absurd parameters (rejected later, at run) cannot make Load
// allocate absurd scratch.
func scratchNeeds(d *plan.Dispatch, e *Exec) (act, ws int) {
	floats := func(slot int) int {
		if !present(d, slot) {
			return 0
		}
		return len(e.bufs[d.Bind[slot].Buf].b) / 4
	}
	switch d.Kernel {
	case plan.RMSNormMatVec, plan.LayerNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec:
		a := plan.DecodeProduct(d)
		return min(satMul(a.K, a.M), floats(1)), 0
	case plan.Conv1D:
		a := plan.DecodeConv1D(d)
		k := min(satMul(a.Cin, a.Kw), 4*floats(0))
		return satMul(min(convTileRows(k), satAdd(a.T, satMul(2, a.Pad))), k), 0
	case plan.Embed:
		return 0, min(plan.DecodeEmbed(d).Dim, floats(2))
	case plan.Rope:
		return 0, min(plan.DecodeRope(d).HeadDim, floats(0)) + 2
	case plan.RopeKV:
		return 0, min(plan.DecodeRopeKV(d).HeadDim, floats(0)) + 2
	case plan.RopeKVPaged:
		return 0, min(plan.DecodeRopeKVPaged(d).HeadDim, floats(0)) + 2
	case plan.AttentionPaged:
		// a row sees at most its table's positions
		a := plan.DecodeAttentionPaged(d)
		return 0, min(satMul(a.TableStride, a.BlockSize), maxKV)
	case plan.RopeAttentionMatVec:
		// its RopeAttention's (the product needs none)
		a := plan.DecodeRopeAttentionMatVec(d)
		ra := a.RopeAttention().Dispatch()
		return scratchNeeds(&ra, e)
	case plan.RopeAttention:
		// the rotated copy of the rows, and attention's scores (as below)
		a := plan.DecodeRopeAttention(d)
		w := satMul(satAdd(a.NHead, satMul(2, a.NKV)), a.HeadDim)
		kv := a.KVLen
		if ps := a.PosStride; ps > 0 && present(d, 1) {
			kv = max(kv, len(e.bufs[d.Bind[1].Buf].b)/kvElemBytes(d.Type)/ps+1)
		}
		return min(satMul(a.M, w), floats(0)), max(min(kv, maxKV), min(a.HeadDim, floats(0)))
	case plan.Attention:
		a := plan.DecodeAttention(d)
		kv := a.KVLen
		// KV length is usually patched; size for the whole cache.
		if ps := a.PosStride; ps > 0 && present(d, 1) {
			es := 4
			if d.Type == ggml.F16 {
				es = 2
			}
			avail := len(e.bufs[d.Bind[1].Buf].b) / es
			kv = max(kv, avail/ps+1)
		}
		return 0, min(kv, maxKV)
	}
	return 0, 0
}

// attnKVCap is the most keys an Attention dispatch's heads see: its
// static KV length, or, where patched, the positions of one KV head's
// part of the cache (all of it for one head), not more than maxKV.
func attnKVCap(d *plan.Dispatch, e *Exec) int {
	a := plan.DecodeAttention(d)
	kv := a.KVLen
	if ps := a.PosStride; ps > 0 && present(d, 1) {
		n := len(e.bufs[d.Bind[1].Buf].b)/kvElemBytes(d.Type)/ps + 1
		if a.NKV > 1 && a.HeadStride >= ps {
			n = min(n, a.HeadStride/ps)
		}
		kv = max(kv, n)
	}
	return min(kv, maxKV)
}

func (e *Exec) ensureAct(n int) []float32 {
	if n > len(e.act) {
		e.act = make([]float32, n)
	}
	return e.act[:n]
}

func (e *Exec) ensureWorker(n int) { perWorker(&e.wsf, e.pool.Workers(), n) }

// ensureSpans is ensureWorker for wss.
func (e *Exec) ensureSpans(n int) { perWorker(&e.wss, e.pool.Workers(), n) }

// perWorker makes *s one scratch row of at least n per worker.
func perWorker[T any](s *[][]T, workers, n int) {
	if len(*s) == workers && len((*s)[0]) >= n {
		return
	}
	*s = make([][]T, workers)
	for i := range *s {
		(*s)[i] = make([]T, n)
	}
}

// ---- bounds-checked views of bindings ----

// satMul multiplies non-negative ints, saturating instead of overflowing so
// a hostile parameter fails the bounds check rather than wrapping.
func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// extent is the number of elements m rows of n with row stride ld span.
func extent(m, ld, n int) int {
	if m <= 0 || n <= 0 {
		return 0
	}
	return satAdd(satMul(m-1, ld), n)
}

// view returns binding slot's memory from its offset on, or nil for an
// empty optional slot.
func (e *Exec) bind(d *plan.Dispatch, slot int) (*buffer, uint64, bool) {
	if slot >= int(d.NBind) || d.Bind[slot].Buf == plan.NoBuf {
		return nil, 0, false
	}
	bd := d.Bind[slot]
	return &e.bufs[bd.Buf], bd.Off, true
}

// f32 returns need float32 elements of binding slot; nil with no error for
// an empty optional slot.
func (e *Exec) f32(d *plan.Dispatch, slot, need int) ([]float32, error) {
	return typedSlice[float32](e, d, slot, need)
}

// typedSlice returns need elements of type T of binding slot, from the
// buffer's typed view (nil when the buffer is too small or misaligned for
// it); nil with no error for an empty optional slot.
func typedSlice[T float32 | int32 | uint16](e *Exec, d *plan.Dispatch, slot, need int) ([]T, error) {
	b, off, ok := e.bind(d, slot)
	if !ok {
		return nil, nil
	}
	var v []T
	what := ""
	switch p := any(&v).(type) {
	case *[]float32:
		*p, what = b.f, "floats"
	case *[]int32:
		*p, what = b.i, "int32s"
	case *[]uint16:
		*p, what = b.h, "halves"
	}
	size := uint64(unsafe.Sizeof(T(0)))
	if off%size != 0 || v == nil && need > 0 {
		return nil, e.errf("binding %d: offset %d of %q is not %d-byte aligned", slot, off, b.name, size)
	}
	start := off / size
	if start > uint64(len(v)) || uint64(need) > uint64(len(v))-start {
		return nil, e.errf("binding %d: %d %s at byte %d overrun buffer %q (%d bytes)", slot, need, what, off, b.name, len(b.b))
	}
	return v[start : start+uint64(need)], nil
}

func (e *Exec) bytes(d *plan.Dispatch, slot, need int) ([]byte, error) {
	b, off, ok := e.bind(d, slot)
	if !ok {
		return nil, nil
	}
	if off > uint64(len(b.b)) || uint64(need) > uint64(len(b.b))-off {
		return nil, e.errf("binding %d: %d bytes at %d overrun buffer %q (%d bytes)", slot, need, off, b.name, len(b.b))
	}
	return b.b[off : off+uint64(need)], nil
}

// req turns a missing required binding into an error.
func (e *Exec) req(slot int, ok bool) error {
	if !ok {
		return e.errf("binding %d is required", slot)
	}
	return nil
}

// present reports whether an optional binding is set. Buffers cannot be
// patched, so required ones were already checked at load.
func present(d *plan.Dispatch, slot int) bool {
	return slot < int(d.NBind) && d.Bind[slot].Buf != plan.NoBuf
}

// typed is a view of a KV cache in f32 or f16.
type typed struct {
	f []float32
	h []uint16
}

func (e *Exec) typedView(d *plan.Dispatch, slot, need int) (typed, error) {
	var v typed
	var err error
	if d.Type == ggml.F16 {
		v.h, err = typedSlice[uint16](e, d, slot, need)
		if err == nil && v.h == nil {
			err = e.req(slot, false)
		}
	} else {
		v.f, err = e.f32(d, slot, need)
		if err == nil && v.f == nil {
			err = e.req(slot, false)
		}
	}
	return v, err
}

// chunkGrain picks a chunk size so each chunk does roughly 32k element-ops:
// small enough to balance, large enough to amortise the pool handoff.
func chunkGrain(perItem int) int {
	if perItem <= 0 {
		return 1 << 20
	}
	return max(1, 32768/perItem)
}

// kvElemBytes is the size of a KV cache element of type t (f16 or f32).
func kvElemBytes(t ggml.Type) int {
	if t == ggml.F16 {
		return 2
	}
	return 4
}

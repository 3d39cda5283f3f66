package llm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

// MatMulRows is the row count from which a batch step runs its products as
// matrix-matrix (GEMM) kernels; below it they are matrix-vector kernels
// over the rows. BatchOptions.MatMulRows replaces it for one plan.
const MatMulRows = 16

// Passes of a batch plan: the step with matrix-vector products, the step
// with GEMMs, the one-row step, then the sample pass (a step's draws, each
// with its slot's sampler, in one dispatch).
// The one-row step is what a lone stream decodes with: single-sequence
// decode's dispatches (norms fused into the products after them, the
// gated activation into the down product) over the paged cache, where the
// multi-row steps keep norms and activations as dispatches of their own
// (on the CPU a third more pool jobs, each with its barrier), unless
// BatchOptions.FuseRows.
const (
	BatchPassMatVec = iota
	BatchPassMatMul
	BatchPassOne
	BatchPassSample
)

// pagedKV is where a batch plan's rows find their positions and blocks.
type pagedKV struct {
	pos, table  plan.BufID // i32[rows], i32[rows][tableStride]
	blockSize   int
	blocks      int // the pool's: BatchOptions.Blocks, and the padding rows' spare with Buckets
	tableStride int
	pools       []plan.BufID // every layer's K and V pools
	elem        int          // bytes per cache element
}

func (p *pagedKV) headStride(h HParams) int  { return p.blockSize * h.HeadDim }
func (p *pagedKV) blockStride(h HParams) int { return h.NKV * p.headStride(h) }

// BatchOptions size a batch plan.
type BatchOptions struct {
	// Rows is the most tokens one step feeds, over all its sequences.
	Rows int
	// Seqs is the most sequences sampled from at once (sampler slots).
	Seqs int
	// BlockSize is the positions a KV block holds; Blocks the pool's size.
	BlockSize, Blocks int
	// Context is the most positions one sequence holds (its table's
	// length in blocks is Context/BlockSize, rounded up).
	Context  int
	F32Cache bool
	// MatMulRows, when positive, replaces MatMulRows as the row count from
	// which a step runs GEMMs (to measure the two paths at one size).
	MatMulRows int
	// FuseRows: the mat-vec step (2 to MatMulRows-1 rows) fuses each
	// sublayer's norm into the products after it, the gated activation
	// into the down product and the final norm into the logits, as the
	// one-row step does (decode's dispatches): 91 dispatches fewer a step
	// on a 30-layer model. Worth it only where the backend's fused
	// products make a row's norm or activation once, not once per weight
	// row: the GPU mat-vecs recompute it in every warp, and measured
	// slower fused (H200, 16 rows: BENCHMARKS.md, paged38 and b38s28).
	FuseRows bool
	// Buckets, when set, are the row counts (ascending, 2 to Rows) a
	// step's rows are padded up to: a step of m rows, 1 < m <= the last
	// bucket, runs as the smallest bucket of at least m rows, the rows
	// past m padding rows (token 0 at position 0 of a spare block of the
	// pool that no sequence's table names; their logits are never read).
	// A backend that records a step's launches per shape (cuda's graphs)
	// then meets a few shapes, which Warm records ahead of the streams.
	Buckets []int
}

// BucketRows is the rows a step of m rows runs as under buckets
// (BatchOptions.Buckets): the smallest bucket of at least m rows; m
// itself when m is 1, past the last bucket, or buckets is empty.
func BucketRows(buckets []int, m int) int {
	if m <= 1 {
		return m
	}
	if i, _ := slices.BinarySearch(buckets, m); i < len(buckets) {
		return buckets[i]
	}
	return m
}

// Batch is a model loaded for many sequences at once (continuous
// batching): one step feeds rows that are tokens of different sequences,
// each at its own position over its own blocks of one KV pool (the block
// numbers come from the caller, e.g. engine/kvpage), and each sequence
// samples from its row with its own settings.
type Batch struct {
	Arch  Arch
	H     HParams
	opt   BatchOptions
	exec  plan.Executable
	lay   *layout
	pg    *pagedKV
	next  plan.BufID // i32[seqs]: each slot's drawn token
	draws plan.BufID // i32[seqs][SampleDrawWords]: a step's draws
	// host staging
	ids, pos, table []int32
	dw              []int32 // SampleAll's draws
	drawn           []int32 // SampleAll's read of every slot's token
	logits          []float32
	settings        []uint32 // SetSampler's, reused
	counts          []int32
}

// Row is one token of a step: its sequence's block table (positions
// 0..Pos must be covered) and its position.
type Row struct {
	Token int32
	Pos   int
	Table []int32
}

// LoadBatch builds and loads a batch plan for f's model.
func LoadBatch(backend plan.Backend, f *gguf.File, opt BatchOptions) (*Batch, error) {
	a, h, err := readModel(f)
	if err != nil {
		return nil, err
	}
	if opt.Rows <= 0 || opt.Seqs <= 0 || opt.BlockSize <= 0 || opt.Blocks <= 0 || opt.Context <= 0 {
		return nil, fmt.Errorf("llm: batch of %d rows, %d sequences, %d blocks of %d, context %d", opt.Rows, opt.Seqs, opt.Blocks, opt.BlockSize, opt.Context)
	}
	opt.Context = min(opt.Context, h.NCtx)
	for i, n := range opt.Buckets {
		if n < 2 || n > opt.Rows || (i > 0 && n <= opt.Buckets[i-1]) {
			return nil, fmt.Errorf("llm: batch row buckets %v: want ascending row counts from 2 to %d", opt.Buckets, opt.Rows)
		}
	}
	kvt := ggml.F16
	if opt.F32Cache {
		kvt = ggml.F32
	}
	p, lay, pg, sb, err := buildBatchPlan(a, h, f, opt, kvt)
	if err != nil {
		return nil, err
	}
	exec, err := backend.Load(p)
	if err != nil {
		return nil, fmt.Errorf("llm: loading the batch plan on %s: %w", backend.Name(), err)
	}
	return &Batch{Arch: a, H: h, opt: opt, exec: exec, lay: lay, pg: pg, next: sb.next, draws: sb.draws,
		table: make([]int32, opt.Rows*pg.tableStride), logits: make([]float32, h.NVocab)}, nil
}

// Close releases the backend's buffers.
func (b *Batch) Close() error { return b.exec.Close() }

// TraceCounts is the backend's running counts (graphs recorded,
// launches, waits, buffers grown), for a step trace
// (engine/batch's Runner.Trace); empty where the backend keeps none.
func (b *Batch) TraceCounts() string {
	if c, ok := b.exec.(interface{ TraceCounts() string }); ok {
		return c.TraceCounts()
	}
	return ""
}

// TableLen is how many blocks a sequence's table holds.
func (b *Batch) TableLen() int { return b.pg.tableStride }

// sampleBufs are the batch plan's buffers a step's draws go through.
type sampleBufs struct{ next, draws plan.BufID }

func buildBatchPlan(a Arch, h HParams, f *gguf.File, opt BatchOptions, kvt ggml.Type) (*plan.Plan, *layout, *pagedKV, sampleBufs, error) {
	b, w, err := newBuilder(a, h, f, "llm-batch-"+a.Name)
	if err != nil {
		return nil, nil, nil, sampleBufs{}, err
	}
	rows := opt.Rows
	lay := &layout{ctx: opt.Context, batch: rows, kvType: kvt}
	lay.tokens = b.buffer("tokens", plan.IO, 4*rows)
	lay.logits = b.buffer("logits", plan.IO, 4*rows*h.NVocab)
	pg := &pagedKV{blockSize: opt.BlockSize, blocks: opt.Blocks, tableStride: (opt.Context + opt.BlockSize - 1) / opt.BlockSize}
	if len(opt.Buckets) > 0 {
		pg.blocks++ // the padding rows' block, opt.Blocks: no caller names it
	}
	pg.pos = b.buffer("pos", plan.IO, 4*rows)
	pg.table = b.buffer("tables", plan.IO, 4*rows*pg.tableStride)
	s := b.scratch(rows, w.gateUpRow)
	rope, err := b.ropeTables(w)
	if err != nil {
		return nil, nil, nil, sampleBufs{}, err
	}
	kc, vc := b.kvBuffers("pool", kvt, pg.blocks*pg.blockStride(h))
	pg.pools, pg.elem = append(slices.Clone(kc), vc...), 2
	if kvt == ggml.F32 {
		pg.elem = 4
	}
	for _, mat := range []plan.Kernel{plan.MatVec, plan.MatMul} {
		ps, _ := b.p.AddPass("step." + mat.String())
		fw := &forward{builder: b, ps: ps, prefill: true, lay: lay, s: s, w: w, rope: rope, kc: kc, vc: vc, m: rows, mat: mat, paged: pg,
			fuse: opt.FuseRows && mat == plan.MatVec}
		fw.emit()
	}
	one, _ := b.p.AddPass("step.one")
	(&forward{builder: b, ps: one, lay: lay, s: s, w: w, rope: rope, kc: kc, vc: vc, m: 1, mat: plan.MatVec, paged: pg}).emit()
	n, seqs := h.NVocab, opt.Seqs
	// a slot is one sequence's sampler state (settings, counts, drawn
	// token, logprobs); a draw names its slot, its row and its step, and
	// VarNTok counts a step's draws
	scr := b.buffer("sample.scratch", plan.Scratch, 4*2*n*seqs)
	next := b.buffer("next", plan.IO, 4*seqs)
	draws := b.buffer("sample.draws", plan.IO, 4*plan.SampleDrawWords*seqs)
	lay.settings = b.buffer("sample.settings", plan.IO, 4*plan.SampleSettingsWords*seqs)
	lay.counts = b.buffer("sample.counts", plan.IO, 4*(2*n+1)*seqs)
	lay.logprobs = b.buffer("sample.logprobs", plan.IO, 4*plan.SampleLogprobWords*seqs)
	ps, _ := b.p.AddPass("sample")
	d := plan.SampleArgs{X: plan.F32At(lay.logits, 0), Out: plan.F32At(next, 0), Settings: plan.F32At(lay.settings, 0),
		Counts: plan.F32At(lay.counts, 0), Scratch: plan.F32At(scr, 0), Logprobs: plan.F32At(lay.logprobs, 0),
		Draws: plan.F32At(draws, 0), N: n, M: seqs, Ldx: n, Slots: seqs, XRows: rows}.Dispatch()
	d.AddPatch(plan.PatchSampleM, plan.VarNTok, 1, 0)
	ps.Add(d)
	if err := b.p.Validate(); err != nil {
		return nil, nil, nil, sampleBufs{}, err
	}
	return b.p, lay, pg, sampleBufs{next, draws}, nil
}

// Step feeds rows through the model: every row's K and V go to its block
// at its position, and every row's logits are left for Logits and Sample.
// Rows of one sequence must come in position order, and a row sees the
// positions before it that earlier steps or earlier rows of this step
// wrote.
func (b *Batch) Step(rows []Row) error {
	pass, vars, err := b.stage(rows, 0)
	if err != nil {
		return err
	}
	return b.exec.Run(pass, &vars)
}

// stage checks rows and writes their tokens, positions and tables to the
// plan's inputs, padded to pad rows (0: to BucketRows of the rows) with
// rows on the spare block, and returns the step's pass and variables.
func (b *Batch) stage(rows []Row, pad int) (int, plan.Vars, error) {
	m := len(rows)
	if pad == 0 && (m == 0 || m > b.opt.Rows) {
		return 0, plan.Vars{}, fmt.Errorf("llm: a batch step of %d rows (1 to %d)", m, b.opt.Rows)
	}
	mp := max(pad, BucketRows(b.opt.Buckets, m))
	if cap(b.ids) < mp {
		b.ids, b.pos = make([]int32, b.opt.Rows), make([]int32, b.opt.Rows)
	}
	ids, pos, ts := b.ids[:mp], b.pos[:mp], b.pg.tableStride
	table := b.table[:mp*ts]
	keys := 0 // the deepest row's keys
	for i, r := range rows {
		if r.Token < 0 || int(r.Token) >= b.H.NVocab {
			return 0, plan.Vars{}, fmt.Errorf("llm: token id %d outside the vocabulary of %d", r.Token, b.H.NVocab)
		}
		if r.Pos < 0 || r.Pos >= b.opt.Context {
			return 0, plan.Vars{}, fmt.Errorf("%w: position %d, the context holds %d", ErrContextFull, r.Pos, b.opt.Context)
		}
		need := r.Pos/b.pg.blockSize + 1
		if len(r.Table) < need || len(r.Table) > ts {
			return 0, plan.Vars{}, fmt.Errorf("llm: row %d at position %d has a table of %d blocks (needs %d, at most %d)", i, r.Pos, len(r.Table), need, ts)
		}
		for _, blk := range r.Table[:need] {
			if blk < 0 || int(blk) >= b.opt.Blocks {
				return 0, plan.Vars{}, fmt.Errorf("llm: row %d names block %d outside the pool of %d", i, blk, b.opt.Blocks)
			}
		}
		ids[i], pos[i] = r.Token, int32(r.Pos)
		keys = max(keys, r.Pos+1)
		row := table[i*ts : (i+1)*ts]
		n := copy(row, r.Table)
		clear(row[n:])
	}
	for i := m; i < mp; i++ { // padding: position 0 of the spare block
		ids[i], pos[i] = 0, 0
		row := table[i*ts : (i+1)*ts]
		clear(row)
		row[0] = int32(b.opt.Blocks) // the spare block
	}
	keys = max(keys, 1)
	m = mp
	for _, w := range []struct {
		buf plan.BufID
		v   []int32
	}{{b.lay.tokens, ids}, {b.pg.pos, pos}, {b.pg.table, table}} {
		if err := plan.WriteI32(b.exec, w.buf, 0, w.v); err != nil {
			return 0, plan.Vars{}, err
		}
	}
	pass := BatchPassMatVec
	switch {
	case m == 1:
		pass = BatchPassOne
	case m >= cmp.Or(b.opt.MatMulRows, MatMulRows):
		pass = BatchPassMatMul
	}
	// VarKVLen, which no dispatch of the batch plan reads, is the deepest
	// row's keys: a backend may launch the step's attention for it
	// (cuda's split over a deep row's keys)
	return pass, plan.Vars{plan.VarPos: 0, plan.VarNTok: int64(m), plan.VarKVLen: int64(keys)}, nil
}

// Logits reads row's logits after the last Step (the slice is reused).
func (b *Batch) Logits(row int) ([]float32, error) {
	if row < 0 || row >= b.opt.Rows {
		return nil, fmt.Errorf("llm: row %d outside the batch of %d", row, b.opt.Rows)
	}
	if err := plan.ReadF32(b.exec, b.lay.logits, row*b.H.NVocab, b.logits); err != nil {
		return nil, err
	}
	return b.logits, nil
}

func (b *Batch) checkSlot(slot int) error {
	if slot < 0 || slot >= b.opt.Seqs {
		return fmt.Errorf("llm: sampler slot %d outside the %d of the batch", slot, b.opt.Seqs)
	}
	return nil
}

// SetSampler starts a generation in slot with s after the context tokens
// ctx (whose tail the penalties count, as Generator does); generated are
// tokens it already drew (a preempted sequence resumed in another slot),
// counted as the Sample pass counts its draws.
func (b *Batch) SetSampler(slot int, s Sampler, ctx []int32, generated ...int32) error {
	if err := b.checkSlot(slot); err != nil {
		return err
	}
	if err := s.Check(b.H.NVocab); err != nil {
		return err
	}
	// the buffers are the Batch's (a joining sequence's setup is on its
	// first step's path: no 2n+1 words allocated a join)
	n := b.H.NVocab
	if b.settings == nil {
		b.settings, b.counts = make([]uint32, plan.SampleSettingsWords), make([]int32, 2*n+1)
	}
	w, c := b.settings, b.counts
	clear(w)
	clear(c)
	st := s.settings()
	st.Encode(w)
	if err := plan.WriteU32(b.exec, b.lay.settings, slot*plan.SampleSettingsWords, w); err != nil {
		return err
	}
	for _, id := range ctx[len(ctx)-s.promptWindow(len(ctx)):] {
		plan.CountSampled(c, n, id)
	}
	for _, id := range generated {
		plan.CountSampled(c, n, id)
	}
	return plan.WriteI32(b.exec, b.lay.counts, slot*(2*n+1), c)
}

// Draw is one token to draw after a Step: from Row's logits, with Slot's
// sampler, as the Step-th token of its generation (the draw counter of
// Sampler.Seed's stream); LP, when not nil, gets its logprobs record with
// Top alternatives.
type Draw struct {
	Slot, Row int
	Step      uint64
	Top       int
	LP        *TokenLogprob
}

// Sample draws slot's next token from row's logits of the last Step (one
// Draw).
func (b *Batch) Sample(slot, row int, step uint64, top int, lp *TokenLogprob) (int32, error) {
	var tok [1]int32
	err := b.SampleAll([]Draw{{Slot: slot, Row: row, Step: step, Top: top, LP: lp}}, tok[:])
	return tok[0], err
}

// SampleAll draws each of ds's tokens into tokens (tokens[i] is ds[i]'s)
// from the last Step's logits: one sample pass makes every draw (each with
// its slot's sampler, its row and its step; a GPU launches the sampler
// once for all of them), and the drawn tokens are read in one go, so a GPU
// waits once for a step's draws. Each draw has a slot of its own.
func (b *Batch) SampleAll(ds []Draw, tokens []int32) error {
	if len(ds) == 0 {
		return b.checkDraws(ds, tokens)
	}
	vars, err := b.stageDraws(ds, tokens)
	if err != nil {
		return err
	}
	if err := b.exec.Run(BatchPassSample, &vars); err != nil {
		return err
	}
	return b.readDraws(ds, tokens)
}

// StepSample is Step(rows), then SampleAll(ds, tokens) from its logits,
// in one call: where the backend runs passes joined (plan.Joiner: the
// CPU) the step and its draws run as one pass of the backend's work (one
// pool pass: the workers go from the step's last dispatch to the draws
// without parking, and the host stages both before either runs), else as
// the two calls. The tokens are SampleAll's.
func (b *Batch) StepSample(rows []Row, ds []Draw, tokens []int32) error {
	j, ok := b.exec.(plan.Joiner)
	if !ok || len(ds) == 0 {
		if err := b.Step(rows); err != nil {
			return err
		}
		return b.SampleAll(ds, tokens)
	}
	pass, vars, err := b.stage(rows, 0)
	if err != nil {
		return err
	}
	dv, err := b.stageDraws(ds, tokens)
	if err != nil {
		return err
	}
	if err := j.RunJoined([]int{pass, BatchPassSample}, []plan.Vars{vars, dv}); err != nil {
		return err
	}
	return b.readDraws(ds, tokens)
}

// Warm runs, twice each, every step shape a run of the batch meets under
// Buckets (a step of each bucket's rows, largest first, and the one-row
// step) and the sample pass for every draw count from Seqs down to 1, on
// padding rows only: all of them once, then all again, so that a backend
// recording launches per shape (cuda: a graph on a shape's second run,
// after the first round grew the scratch arena to the largest step's)
// has them before any sequence joins: the
// steps that admit prompts beside running streams then replay recorded
// graphs instead of launching and recording one. Every sampler slot is
// left greedy with empty counts (SetSampler starts a sequence's). A no-op
// without Buckets.
func (b *Batch) Warm() error {
	if len(b.opt.Buckets) == 0 {
		return nil
	}
	if err := b.greedySlots(); err != nil {
		return err
	}
	ds := make([]Draw, b.opt.Seqs)
	for i := range ds {
		ds[i] = Draw{Slot: i, Row: i % b.opt.Rows}
	}
	toks := make([]int32, len(ds))
	// every shape once, then every shape again: whatever the first round
	// grows (cuda's scratch arena, whose growth drops recorded graphs)
	// has grown before the second records anything
	for range 2 {
		for i := len(b.opt.Buckets); i >= 0; i-- {
			n := 1
			if i > 0 {
				n = b.opt.Buckets[i-1]
			}
			pass, vars, err := b.stage(nil, n)
			if err != nil {
				return err
			}
			if err := b.exec.Run(pass, &vars); err != nil {
				return fmt.Errorf("llm: warming the batch step of %d rows: %w", n, err)
			}
		}
		for k := len(ds); k > 0; k-- {
			if err := b.SampleAll(ds[:k], toks); err != nil {
				return fmt.Errorf("llm: warming %d draws: %w", k, err)
			}
		}
	}
	return b.greedySlots()
}

// greedySlots sets every sampler slot greedy with empty counts.
func (b *Batch) greedySlots() error {
	for slot := range b.opt.Seqs {
		if err := b.SetSampler(slot, Sampler{}, nil); err != nil {
			return err
		}
	}
	return nil
}

// checkDraws checks that ds fit tokens and the batch's sampler slots.
func (b *Batch) checkDraws(ds []Draw, tokens []int32) error {
	if len(tokens) < len(ds) {
		return fmt.Errorf("llm: %d draws into %d tokens", len(ds), len(tokens))
	}
	if len(ds) > b.opt.Seqs {
		return fmt.Errorf("llm: %d draws in one step, the batch has %d sampler slots", len(ds), b.opt.Seqs)
	}
	return nil
}

// stageDraws checks ds (one draw a slot, rows in the batch) and writes
// them to the plan's draws buffer; it returns the sample pass's
// variables.
func (b *Batch) stageDraws(ds []Draw, tokens []int32) (plan.Vars, error) {
	if err := b.checkDraws(ds, tokens); err != nil {
		return plan.Vars{}, err
	}
	used := make([]bool, b.opt.Seqs)
	dw := b.dw[:0]
	for _, d := range ds {
		if err := b.checkSlot(d.Slot); err != nil {
			return plan.Vars{}, err
		}
		if used[d.Slot] {
			return plan.Vars{}, fmt.Errorf("llm: two draws in sampler slot %d in one step", d.Slot)
		}
		used[d.Slot] = true
		if d.Row < 0 || d.Row >= b.opt.Rows {
			return plan.Vars{}, fmt.Errorf("llm: row %d outside the batch of %d", d.Row, b.opt.Rows)
		}
		if d.Step > math.MaxInt64 {
			return plan.Vars{}, errors.New("llm: sample step out of range")
		}
		// the step as the Step param carries it (its low 32 bits)
		dw = append(dw, int32(d.Slot), int32(d.Row), int32(uint32(d.Step)))
	}
	b.dw = dw
	if err := plan.WriteI32(b.exec, b.draws, 0, dw); err != nil {
		return plan.Vars{}, err
	}
	return plan.Vars{plan.VarNTok: int64(len(ds))}, nil
}

// readDraws reads the tokens (and logprobs) of ds after the sample pass.
func (b *Batch) readDraws(ds []Draw, tokens []int32) error {
	if cap(b.drawn) < b.opt.Seqs {
		b.drawn = make([]int32, b.opt.Seqs)
	}
	drawn := b.drawn[:b.opt.Seqs]
	if err := plan.ReadI32(b.exec, b.next, 0, drawn); err != nil {
		return err
	}
	for i, d := range ds {
		tokens[i] = drawn[d.Slot]
		if d.LP != nil {
			d.LP.Token = tokens[i]
			if err := readLogprobs(b.exec, b.lay.logprobs, d.Slot, d.Top, d.LP); err != nil {
				return err
			}
		}
	}
	return nil
}

// CopyBlock copies the first positions positions of block src into block
// dst in every layer's keys and values (copy-on-write of a shared block,
// kvpage.Copy). The copy goes through the host: it is rare (a sequence
// writing into a prompt block another holds).
func (b *Batch) CopyBlock(src, dst int32, positions int) error {
	pg := b.pg
	if src < 0 || dst < 0 || int(src) >= b.opt.Blocks || int(dst) >= b.opt.Blocks || positions < 0 || positions > pg.blockSize {
		return fmt.Errorf("llm: copy of %d positions from block %d to %d in a pool of %d blocks of %d", positions, src, dst, b.opt.Blocks, pg.blockSize)
	}
	hs, bs := int64(pg.headStride(b.H)*pg.elem), int64(pg.blockStride(b.H)*pg.elem)
	buf := make([]byte, positions*b.H.HeadDim*pg.elem)
	for _, id := range pg.pools {
		for h := range int64(b.H.NKV) {
			if err := b.exec.Read(id, int64(src)*bs+h*hs, buf); err != nil {
				return err
			}
			if err := b.exec.Write(id, int64(dst)*bs+h*hs, buf); err != nil {
				return err
			}
		}
	}
	return nil
}

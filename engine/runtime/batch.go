package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/harkapp/hark/engine/batch"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
)

// batched is an LLM's continuous-batching engine, made on first use and
// closed with the model.
type batched struct {
	mu    sync.Mutex
	eng   *batch.Engine
	err   error
	trace *os.File // $HARK_BATCH_TRACE's file, closed once the engine stops
}

// BatchBackends are the backends whose models generate API requests
// through the batched engine; on the others they queue for the model one
// after another, unless Options.BatchGPU. On the GPU a lone stream
// decodes slower batched than unbatched (H200, SmolLM2-shape q8_0: ~480
// tok/s through the batch plan's step, whose paged attention and separate
// RoPE cost more than the chained decode's, against ~1,000 chained).
var BatchBackends = map[string]bool{"cpu": true}

// batchMatMulRows is, per backend, the rows from which a batch step's
// products run as GEMMs where llm.MatMulRows (16) is not the better side.
// CUDA: none in the batch plan's 128 rows. 16 sequences stepped faster on
// the mat-vec products (H200, SmolLM2-shape q8_0: 4.67-4.77 ms a step
// against 5.94-5.96 with the tensor-core GEMM,
// bench/cuda/20261130-batch38/batchstep.log), and since the tensor-core
// mat-vec (mat_vec_rows_mma_q8_0) takes up to 128 rows
// (shaders.MatVecRowsMMAMaxRows) so do prompt chunks beside streams and
// prompts admitted alone (the GEMM's step: 4.8-5.0 ms at any row count
// from 17, against 2.62 for 64 rows on the mat-vec,
// bench/cuda/20261203-b38s31). Only for models whose products are all
// q8_0 (the tensor-core mat-vec's type): other models keep
// batchMatMulRowsOther's GEMMs from 17 rows and no step-cost bound
// (batchStepCost is q8_0's), as before. $HARK_BATCH_MATMUL_ROWS replaces
// either (17: the mat-vec to 16 rows only).
var (
	batchMatMulRows      = map[string]int{"cuda": 129}
	batchMatMulRowsOther = map[string]int{"cuda": 17}
)

// allQ8 reports whether every matrix of f is q8_0.
func allQ8(f *gguf.File) bool {
	for _, t := range f.Tensors {
		if len(t.Shape) >= 2 && t.Type != ggml.Q8_0 {
			return false
		}
	}
	return true
}

// matMulRows is backend's batch.Config.MatMulRows for f.
func matMulRows(backend string, f *gguf.File) int {
	if n, err := strconv.Atoi(os.Getenv("HARK_BATCH_MATMUL_ROWS")); err == nil && n >= 0 {
		return n
	}
	if r, ok := batchMatMulRowsOther[backend]; ok && !allQ8(f) {
		return r
	}
	return batchMatMulRows[backend]
}

// batchStepCost is, per backend, a batch step's cost against its rows
// (batch.Config.StepCost), measured on the backend's tuning, and
// batchBesideCost the most a step with decode rows may cost against
// theirs alone (batch.Config.BesideCost): prompts beside running streams
// come in chunks a step's cost allows, so a stream's token waits at most
// ~1.8x its step while 16 prompts are admitted, where a whole 128-row
// prompt step took 5.0-8.7 ms beside 2.2-ms decode steps (H200, issue
// #38's first 16-stream level, bench/cuda/20261203-s31). CUDA: ms a step
// on an H200, SmolLM2-shape q8_0 (BenchmarkGPUStepRows: up to 12 streams'
// decode rows and a shallow prompt chunk beside them, every row count on
// the tensor-core mat-vec; bench/cuda/20261203-b38s31, call 2). Served,
// 16 streams' 16 prompts were admitted in 19 steps of at most 4.6 ms (70
// ms) against 15 of up to 7.5 (89 ms), the level's token p95 3.2-3.6 ms
// against 4.9-5.3.
var (
	batchStepCost   = map[string]string{"cuda": "1:1.267,4:1.768,8:1.82,12:1.821,16:1.919,24:2.04,32:2.068,40:2.247,48:2.31,56:2.471,64:2.618,65:2.825,96:3.179,128:3.998"}
	batchBesideCost = map[string]float64{"cuda": 1.8}
)

// stepCost is backend's batch.Config.StepCost and BesideCost for f:
// batchStepCost's and batchBesideCost's (none where f is not all q8_0),
// or $HARK_BATCH_STEP_COST's (batch.ParseStepCost's form; "0" or
// malformed: none) and $HARK_BATCH_BESIDE_COST's (0: no bound) when set,
// for measuring.
func stepCost(backend string, f *gguf.File) (batch.StepCost, float64) {
	v, r := batchStepCost[backend], batchBesideCost[backend]
	if !allQ8(f) {
		v = ""
	}
	if e := os.Getenv("HARK_BATCH_STEP_COST"); e != "" {
		v = e
	}
	if x, err := strconv.ParseFloat(os.Getenv("HARK_BATCH_BESIDE_COST"), 64); err == nil && x >= 0 {
		r = x
	}
	c, _ := batch.ParseStepCost(v)
	return c, r
}

// batchBuckets is, per backend, the row counts a batch step's rows are
// padded up to (batch.Config.Buckets), so that the steps that admit
// prompts beside running streams, and those of a level's last streams,
// replay graphs the engine recorded at load (llm.Batch.Warm) instead of
// launching their ~275 kernels one by one and recording a graph for each
// new row count on the streams' path (CUDA, H200, issue #38's first
// 16-stream level: 2.7-2.9 ms for 13-15 decode rows so launched against
// 1.9-2.0 replayed, bench/cuda/20261203-b38s31's traces). Between 2 and
// 16 rows the mat-vec step costs within 8% of 16's, past it the buckets
// follow batchStepCost's points. $HARK_BATCH_BUCKETS ("n,n,...";
// "0": none) replaces it.
var batchBuckets = map[string][]int{"cuda": {2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128}}

// buckets is backend's batch.Config.Buckets.
func buckets(backend string) []int {
	v := os.Getenv("HARK_BATCH_BUCKETS")
	if v == "" {
		return batchBuckets[backend]
	}
	var b []int
	for f := range strings.SplitSeq(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 1 {
			b = append(b, n)
		}
	}
	return b
}

// batchFuseRows is, per backend, whether a batch plan's mat-vec step
// fuses its norms and gated activation into its products
// (llm.BatchOptions.FuseRows); $HARK_BATCH_FUSE (0 or 1) replaces it.
// None yet: on CUDA (H200, SmolLM2-shape q8_0, 16 rows) the fused float
// mat-vecs made the step 3.80 ms against 3.14-3.21 apart (each warp
// recomputes a row's norm or activation), and the 8-bit-activation ones
// a threadgroup a row 6.9 ms (BENCHMARKS.md, b38s28).
var batchFuseRows = map[string]bool{}

// fuseRows is backend's batch.Config.FuseRows.
func fuseRows(backend string) bool {
	if v, err := strconv.ParseBool(os.Getenv("HARK_BATCH_FUSE")); err == nil {
		return v
	}
	return batchFuseRows[backend]
}

// batchPromptBeside is, per backend, the most tokens of a long prompt
// (more than batchLongPrompt tokens) a batch step takes while streams
// decode (batch.Config.PromptBeside); elsewhere the whole token budget.
// CUDA: 4. On an H200 (SmolLM2 shape, 4 streams, a 4,000-token prompt;
// BENCHMARKS.md, b38s27) a step of the whole budget's 124 prompt rows at
// ~3,900 keys took 19.7 ms against the streams' 2.3, the streams' longest
// wait (8.4-9.0x their median token gap); with 4 rows a step beside them
// (deep rows split over their keys: cuda's Options.NoDeepSplit) steps
// take 3.0-3.3 ms and the longest wait is 1.2-1.5x, at the cost of the
// long prompt's first token (~710 ms against ~440); 8 rows 1.5-1.6x.
// Short prompts (16 streams arriving together) still take the whole
// budget: that level's tok/s is unchanged.
var batchPromptBeside = map[string]int{"cuda": 4}

// batchLongPrompt is the prompt length past which batchPromptBeside
// applies: prompts of more than one step's token budget.
const batchLongPrompt = batch.DefaultTokenBudget

// promptBeside is backend's batch.Config.PromptBeside and LongPrompt:
// batchPromptBeside's, or $HARK_BATCH_PROMPT_BESIDE's when set (0: the
// whole budget, for measuring), bounding the prompts of more than
// batchLongPrompt tokens, or $HARK_BATCH_LONG_PROMPT's when set (0: every
// prompt).
func promptBeside(backend string) (beside, long int) {
	beside, long = batchPromptBeside[backend], batchLongPrompt
	if n, err := strconv.Atoi(os.Getenv("HARK_BATCH_PROMPT_BESIDE")); err == nil && n >= 0 {
		beside = n
	}
	if n, err := strconv.Atoi(os.Getenv("HARK_BATCH_LONG_PROMPT")); err == nil && n >= 0 {
		long = n
	}
	return beside, long
}

// batchTrace opens $HARK_BATCH_TRACE (a path, appended to) for the batch
// engine's step lines (batch.Config.Trace), for measuring where a running
// stream's gaps go; unset, none. A file that cannot be opened is said in
// the error the engine's load returns.
func batchTrace() (*os.File, error) {
	p := os.Getenv("HARK_BATCH_TRACE")
	if p == "" {
		return nil, nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runtime: HARK_BATCH_TRACE: %w", err)
	}
	return f, nil
}

// batches says whether models on backend batch their API requests.
func batches(backend string, o Options) bool { return BatchBackends[backend] || o.BatchGPU }

// Batch is the model's continuous-batching engine (engine/batch): requests
// that generate through it decode together, sharing the model between
// steps with its queue (a dictation's clean-up waiting for the model gets
// it after the current step). Call it while holding the model; the engine
// outlives the hold, and its requests wait for the model's turns
// themselves. Nil without an error where the backend does not batch
// (BatchBackends, Options.BatchGPU).
func (l *LLMModel) Batch() (*batch.Engine, error) {
	m := l.e.model.(*llmModel)
	if !batches(m.be.Name(), l.r.opt) {
		return nil, nil
	}
	m.batch.mu.Lock()
	defer m.batch.mu.Unlock()
	if m.batch.eng == nil && m.batch.err == nil {
		turn := &llmTurn{r: l.r, e: l.e, m: m}
		c := batch.Config{Context: m.o.M.Context(), F32Cache: l.r.opt.LLM.F32Cache, MatMulRows: matMulRows(m.be.Name(), m.o.File),
			FuseRows: fuseRows(m.be.Name()), Buckets: buckets(m.be.Name())}
		c.PromptBeside, c.LongPrompt = promptBeside(m.be.Name())
		c.StepCost, c.BesideCost = stepCost(m.be.Name(), m.o.File)
		if m.batch.trace, m.batch.err = batchTrace(); m.batch.trace != nil {
			c.Trace = m.batch.trace
		}
		if m.batch.err == nil {
			m.batch.eng, m.batch.err = batch.Load(m.be, m.o.File, m.o.Tk, c, turn)
		}
		if m.batch.eng == nil && m.batch.trace != nil {
			m.batch.trace.Close()
			m.batch.trace = nil
		}
	}
	return m.batch.eng, m.batch.err
}

// close stops the engine (its requests end with batch.ErrClosed).
func (b *batched) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng != nil {
		b.eng.Close()
		if f, eng := b.trace, b.eng; f != nil {
			go func() { <-eng.Done(); f.Close() }()
		}
	}
}

// errReloaded ends a batch whose model was unloaded and loaded again.
var errReloaded = errors.New("runtime: the model was unloaded while requests waited for it")

// llmTurn is a batch engine's place in its model's queue, at interactive
// priority: it holds the model while requests run and lets anyone as
// urgent (a dictation, an API request taking the model) use it
// between steps.
type llmTurn struct {
	r *Runtime
	e *entry
	m *llmModel
}

func (t *llmTurn) Take(ctx context.Context) error {
	e, err := t.r.acquire(ctx, t.e.key.path, Interactive, func(string, *atomic.Int32) (loaded, error) {
		return nil, errReloaded // the engine's model is gone: never load another for it
	})
	if err != nil {
		return err
	}
	if e != t.e || e.model != t.m {
		t.r.release(e)
		return errReloaded
	}
	return nil
}

func (t *llmTurn) Yield(ctx context.Context) error {
	return t.r.yield(ctx, t.e, Interactive, true)
}

func (t *llmTurn) Give() { t.r.release(t.e) }

package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/kvpage"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
)

// Turn is how an Engine shares its model with the model's other users
// (the runtime's queue, where dictation clean-up goes first): Take waits
// for the model, Yield lets a waiter that ranks with the engine or above
// use it between two steps (on error the model is no longer held), Give
// hands it back once nothing is left to run.
type Turn interface {
	Take(ctx context.Context) error
	Yield(ctx context.Context) error
	Give()
}

// Config sizes an Engine. Zero values take the defaults.
type Config struct {
	// Seqs is the most sequences running at once (DefaultSeqs).
	Seqs int
	// TokenBudget is the most tokens one step computes (DefaultTokenBudget):
	// the running streams' decode rows, then prompt chunks.
	TokenBudget int
	// PromptBeside is the most prompt tokens a step takes beside running
	// streams' decode rows (Options.PromptBeside; 0: TokenBudget).
	PromptBeside int
	// LongPrompt limits PromptBeside to prompts of more than LongPrompt
	// tokens (Options.LongPrompt; 0: every prompt).
	LongPrompt int
	// StepCost and BesideCost bound the prompt rows a step takes beside
	// running streams' decode rows by the step's cost (Options.StepCost,
	// Options.BesideCost; unset: no bound but PromptBeside's).
	StepCost   StepCost
	BesideCost float64
	// BlockSize is the positions a KV block holds (DefaultBlockSize).
	BlockSize int
	// Context is the most positions one sequence holds (its prompt and
	// answer); the model's own context bounds it.
	Context int
	// KVBytes is the KV pool's memory budget (default: room for Seqs
	// sequences of up to 1,024 positions, and at least one whole
	// Context). Past it, sequences are preempted and computed again.
	KVBytes  int64
	F32Cache bool
	// MatMulRows is the row count from which a step's products run as
	// GEMMs (llm.BatchOptions.MatMulRows; 0: llm.MatMulRows).
	MatMulRows int
	// FuseRows fuses the mat-vec step's norms and gated activation into
	// its products (llm.BatchOptions.FuseRows).
	FuseRows bool
	// Buckets pads a step's rows up to these row counts
	// (llm.BatchOptions.Buckets; the scheduler's step costs follow), and
	// Load warms every step and draw shape the engine meets
	// (llm.Batch.Warm) before the first request.
	Buckets []int
	// Trace, when set, gets a line a step (Runner.Trace's): where a
	// running stream's gaps go, for measuring.
	Trace io.Writer
}

// Defaults.
const (
	DefaultSeqs        = 16
	DefaultTokenBudget = 128
	DefaultBlockSize   = 16
)

// yieldTraced is the shortest wait for the model between two steps that
// Trace gets a "yield START µs" line for: another user held it (a request
// taking the model, a dictation's clean-up).
const yieldTraced = 50 * time.Microsecond

// ErrClosed ends the requests of an engine that was closed (its model
// unloaded).
var ErrClosed = errors.New("batch: the model was unloaded")

// Engine is continuous batching for one model: Generate may be called
// from many goroutines, and their requests decode together, one batched
// step at a time, over one paged KV cache whose prompt-prefix blocks they
// share.
type Engine struct {
	r      *Runner
	b      *llm.Batch
	tk     *tokenizer.Tokenizer
	ctxLen int
	turn   Turn
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// onSubmit, if set (tests), is called as each request is queued.
	onSubmit func()
}

// Load builds f's batch plan on be and starts its engine. turn shares the
// model (nil: the engine is its only user).
func Load(be plan.Backend, f *gguf.File, tk *tokenizer.Tokenizer, c Config, turn Turn) (*Engine, error) {
	c.Seqs = cmpOr(c.Seqs, DefaultSeqs)
	c.TokenBudget = cmpOr(c.TokenBudget, DefaultTokenBudget)
	c.BlockSize = cmpOr(c.BlockSize, DefaultBlockSize)
	if c.Context <= 0 {
		return nil, errors.New("batch: the engine needs a context length")
	}
	a, err := llm.LookupArch(f.Architecture())
	if err != nil {
		return nil, err
	}
	h, err := llm.ReadHParams(f, a)
	if err != nil {
		return nil, err
	}
	c.Context = min(c.Context, h.NCtx)
	elem := 2
	if c.F32Cache {
		elem = 4
	}
	bb := kvpage.BlockBytes(h.NLayer, h.NKV*h.HeadDim, c.BlockSize, elem)
	if c.KVBytes <= 0 {
		per := (min(c.Context, 1024) + c.BlockSize - 1) / c.BlockSize
		whole := (c.Context + c.BlockSize - 1) / c.BlockSize
		c.KVBytes = int64(max(c.Seqs*per, whole)) * bb
	}
	pool, err := kvpage.New(kvpage.Config{BlockSize: c.BlockSize, Budget: c.KVBytes, BlockBytes: bb})
	if err != nil {
		return nil, err
	}
	b, err := llm.LoadBatch(be, f, llm.BatchOptions{Rows: c.TokenBudget, Seqs: c.Seqs, BlockSize: c.BlockSize,
		Blocks: pool.Blocks(), Context: c.Context, F32Cache: c.F32Cache, MatMulRows: c.MatMulRows, FuseRows: c.FuseRows,
		Buckets: c.Buckets})
	if err != nil {
		return nil, err
	}
	if err := b.Warm(); err != nil {
		b.Close()
		return nil, err
	}
	s, err := New(pool, Options{TokenBudget: c.TokenBudget, MaxSeqs: c.Seqs, PromptBeside: c.PromptBeside, LongPrompt: c.LongPrompt,
		StepCost: c.StepCost, BesideCost: c.BesideCost, Buckets: c.Buckets})
	if err == nil {
		var e *Engine
		if e, err = start(s, b, tk, c, turn); err == nil {
			return e, nil
		}
	}
	b.Close()
	return nil, err
}

func cmpOr(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

func start(s *Scheduler, b *llm.Batch, tk *tokenizer.Tokenizer, c Config, turn Turn) (*Engine, error) {
	r, err := NewRunner(s, b, c.Seqs)
	if err != nil {
		return nil, err
	}
	r.Trace = c.Trace
	if turn == nil {
		turn = ownTurn{}
	}
	e := &Engine{r: r, b: b, tk: tk, ctxLen: c.Context, turn: turn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	go e.loop()
	return e, nil
}

// ownTurn is the Turn of an engine that is its model's only user.
type ownTurn struct{}

func (ownTurn) Take(context.Context) error  { return nil }
func (ownTurn) Yield(context.Context) error { return nil }
func (ownTurn) Give()                       {}

// Close stops the engine: requests still running end with ErrClosed, and
// the batch plan's buffers are released once the current step is done. It
// does not wait (the runtime closes an engine while holding its queue).
func (e *Engine) Close() { e.cancel() }

// Done is closed once a closed engine has stopped and released its batch
// plan (a backend must outlive the plans loaded on it).
func (e *Engine) Done() <-chan struct{} { return e.done }

// Prefilled is how many prompt positions the engine computed (prefix
// sharing shows here).
func (e *Engine) Prefilled() int { return e.r.Prefilled() }

// Peak is the most sequences one step has run (batching shows here).
func (e *Engine) Peak() int { return e.r.Peak() }

// Context is the most positions one sequence holds.
func (e *Engine) Context() int { return e.ctxLen }

func (e *Engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// loop holds the model while requests wait or run, stepping them.
func (e *Engine) loop() {
	defer close(e.done)
	defer e.b.Close()
	for {
		select {
		case <-e.ctx.Done():
			e.r.Fail(ErrClosed)
			return
		case <-e.wake:
		}
		e.run()
	}
}

// run takes the model and steps until nothing is left, yielding it
// between steps to whoever ranks with the engine or above (a dictation's
// clean-up, a request waiting for the model).
func (e *Engine) run() {
	if !e.r.s.Pending() {
		return
	}
	if err := e.turn.Take(e.ctx); err != nil {
		e.r.Fail(closedOr(e.ctx, err))
		return
	}
	for {
		more, err := e.r.Step()
		if err != nil {
			e.r.Fail(fmt.Errorf("batch: a step failed: %w", err))
			break
		}
		if !more || e.ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		if err := e.turn.Yield(e.ctx); err != nil {
			e.r.Fail(closedOr(e.ctx, err))
			return // no longer held
		}
		if d := time.Since(t0); e.r.Trace != nil && d >= yieldTraced {
			e.r.tracef("yield %d %d\n", t0.UnixMicro(), d.Microseconds())
		}
	}
	e.turn.Give()
	e.r.reap()
}

func closedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ErrClosed
	}
	return err
}

// Generate runs prompt's generation with o among the engine's other
// requests, at priority pri (higher first), streaming its text to emit
// as Generator.Generate does: stop tokens unless o.IgnoreEOS, stop
// strings, logprobs, OnToken. The answer is bounded by the room the
// prompt leaves in the context (StopContext when that ends it).
// Cancelling ctx ends it at once, its blocks freed (StopCanceled, no
// error). A request is never dropped silently: it ends with its tokens,
// or with an error that says why.
func (e *Engine) Generate(ctx context.Context, prompt []int32, o llm.GenerateOptions, pri int, emit func(string) error) (llm.Result, error) {
	if len(prompt) == 0 {
		return llm.Result{}, errors.New("batch: the prompt is empty")
	}
	if o.Slide {
		return llm.Result{}, errors.New("batch: a sliding context is not supported by the batched engine")
	}
	if err := o.Sampler.Check(e.b.H.NVocab); err != nil {
		return llm.Result{}, err
	}
	for _, t := range prompt {
		if t < 0 || int(t) >= e.b.H.NVocab {
			return llm.Result{}, fmt.Errorf("batch: token id %d outside the vocabulary of %d", t, e.b.H.NVocab)
		}
	}
	room := e.ctxLen - len(prompt)
	if room <= 0 {
		return llm.Result{}, fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", llm.ErrContextFull, len(prompt), e.ctxLen)
	}
	capped := o.MaxTokens <= 0 || o.MaxTokens >= room
	if capped {
		o.MaxTokens = room
	}
	out := llm.NewTextOut(e.tk, prompt, o, emit)
	box := &mailbox{ready: make(chan struct{}, 1)}
	req := &Request{Prompt: prompt, MaxTokens: o.MaxTokens, Priority: pri}
	if err := e.ctx.Err(); err != nil {
		return llm.Result{}, ErrClosed
	}
	if err := e.r.submit(req, o.Sampler, box); err != nil {
		return llm.Result{}, err
	}
	id := e.r.s.arrivalOf(req)
	if e.r.Trace != nil {
		e.r.tracef("submit %d prompt=%d priority=%d id=%d\n", time.Now().UnixMicro(), len(prompt), pri, id)
	}
	if e.onSubmit != nil {
		e.onSubmit()
	}
	e.kick()
	for {
		select {
		case <-ctx.Done():
			e.r.Cancel(req)
			return out.Finish(llm.StopCanceled)
		case <-box.ready:
		}
		toks, ended, err := box.take()
		if e.r.Trace != nil && len(toks) > 0 {
			e.r.tracef("recv %d %d n=%d\n", id, time.Now().UnixMicro(), len(toks))
		}
		for _, lp := range toks {
			done, reason, terr := out.Take(lp.Token, lp)
			if terr != nil || done {
				e.r.Cancel(req) // its blocks back at once
			}
			if terr != nil {
				return out.Result(), terr
			}
			if done {
				return out.Finish(reason)
			}
			if ctx.Err() != nil { // as Generator: checked at every token
				e.r.Cancel(req)
				return out.Finish(llm.StopCanceled)
			}
		}
		if !ended {
			continue
		}
		if err != nil {
			return out.Result(), err
		}
		if capped {
			return out.Finish(llm.StopContext)
		}
		return out.Finish(llm.StopMaxTokens)
	}
}

// mailbox is a Generate call's sink: the stepping goroutine puts tokens
// without waiting, and Generate takes them as they come.
type mailbox struct {
	mu    sync.Mutex
	toks  []llm.TokenLogprob
	ended bool
	err   error
	ready chan struct{} // a token or the end is there to take
}

func (b *mailbox) token(tok int32, lp llm.TokenLogprob) {
	b.mu.Lock()
	lp.Token = tok
	b.toks = append(b.toks, lp)
	b.mu.Unlock()
	b.signal()
}

func (b *mailbox) end(err error) {
	b.mu.Lock()
	b.ended, b.err = true, err
	b.mu.Unlock()
	b.signal()
}

func (b *mailbox) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *mailbox) take() ([]llm.TokenLogprob, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.toks
	b.toks = nil
	return t, b.ended, b.err
}

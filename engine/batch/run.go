package batch

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/llm"
)

// Model is the M-sequence step a Runner drives (llm.Batch).
type Model interface {
	// StepSample feeds rows, then makes ds's draws from their logits
	// (on the CPU in one pool pass: llm.Batch.StepSample).
	StepSample(rows []llm.Row, ds []llm.Draw, tokens []int32) error
	SetSampler(slot int, s llm.Sampler, ctx []int32, generated ...int32) error
	CopyBlock(src, dst int32, positions int) error
}

// Runner runs a Scheduler's steps on a model: block copies, then one
// batched step over every row with, in the same call, each sampling
// row's token drawn with its request's own sampler (a slot of the model's per-sequence sampler
// state, held while the request runs; a preempted request gives its slot
// back and takes one again, its counts rebuilt, when it resumes).
type Runner struct {
	s *Scheduler
	m Model

	mu       sync.Mutex
	samplers map[*Request]llm.Sampler
	slots    map[*Request]int
	// sinks get their request's tokens as they are drawn, and its end.
	sinks map[*Request]sink
	free  []int
	// prefilled counts the prompt positions the model computed (prefix
	// sharing shows here: tests, metrics).
	prefilled int
	// peak is the most sequences one step has run (tests, metrics).
	peak int
	rows []llm.Row
	// afterNext, when set (tests), runs between a step's Next and its
	// rows' slots: where a request may end under the step.
	afterNext func(Step)
	// Trace, when set, gets a line a step that ran, written on the
	// stepping goroutine after it: its start (Unix µs), its length (µs),
	// its decode rows, prompt tokens (a chunk's, or a resumed request's
	// recomputed ones) and sequences, and its deepest position. The time between one step's end and the next one's
	// start is the engine's wait for its turn of the model.
	Trace   io.Writer
	traceMu sync.Mutex // Trace's lines come from the stepping goroutine and from requests'
}

// NewRunner drives s on m, which holds seqs sampler slots (at least the
// scheduler's MaxSeqs).
func NewRunner(s *Scheduler, m Model, seqs int) (*Runner, error) {
	if seqs < s.opt.MaxSeqs {
		return nil, fmt.Errorf("batch: %d sampler slots for %d running sequences", seqs, s.opt.MaxSeqs)
	}
	r := &Runner{s: s, m: m, samplers: map[*Request]llm.Sampler{}, slots: map[*Request]int{}, sinks: map[*Request]sink{}}
	for i := range seqs {
		r.free = append(r.free, i)
	}
	return r, nil
}

// sink receives a request's tokens as the runner draws them (with their
// logprobs records when its sampler asks for them), then its end: err is
// nil when it reached its max tokens. Called on the stepping goroutine:
// it must not block.
type sink interface {
	token(tok int32, lp llm.TokenLogprob)
	end(err error)
}

// Submit queues req, to be sampled with sm.
func (r *Runner) Submit(req *Request, sm llm.Sampler) error { return r.submit(req, sm, nil) }

func (r *Runner) submit(req *Request, sm llm.Sampler, out sink) error {
	// registered first: a step may run as soon as the scheduler has it
	r.mu.Lock()
	r.samplers[req] = sm
	if out != nil {
		r.sinks[req] = out
	}
	r.mu.Unlock()
	if err := r.s.Submit(req); err != nil {
		r.mu.Lock()
		delete(r.samplers, req)
		delete(r.sinks, req)
		r.mu.Unlock()
		return err
	}
	return nil
}

// Cancel ends req at once, its blocks back in the pool.
func (r *Runner) Cancel(req *Request) { r.s.Cancel(req) }

// Prefilled is the number of prompt positions computed so far.
func (r *Runner) Prefilled() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prefilled
}

// Peak is the most sequences one step has run so far.
func (r *Runner) Peak() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// Step runs one scheduler step; false when nothing was left to run.
func (r *Runner) Step() (bool, error) {
	var ph phases
	ph.t0 = time.Now()
	st := r.s.Next()
	if len(st.Rows) == 0 {
		r.reap()
		return r.s.Pending(), nil
	}
	if r.Trace != nil {
		ph.next = time.Now()
		defer r.trace(&ph, st)
	}
	if r.afterNext != nil {
		r.afterNext(st)
	}
	for _, c := range st.Copies {
		if err := r.m.CopyBlock(c.Src, c.Dst, c.Positions); err != nil {
			return false, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked() // the slots of requests Next preempted are free for this step's
	rows := r.rows[:0]
	type draw struct {
		req             *Request
		slot, row, step int
	}
	var draws []draw
	for _, row := range st.Rows {
		if _, live := r.samplers[row.Req]; !live {
			// it ended after Next and was reaped above: no slot (it
			// would never be given back) and no rows; Done skips its draw
			if row.Sample {
				draws = append(draws, draw{row.Req, -1, -1, 0})
			}
			continue
		}
		slot, ok := r.slots[row.Req]
		if !ok {
			if len(r.free) == 0 {
				return false, errors.New("batch: more running sequences than sampler slots")
			}
			slot, r.free = r.free[0], r.free[1:]
			r.slots[row.Req] = slot
			// the slot is the request's until it ends or is preempted:
			// its counts are the prompt's and what it drew so far
			if err := r.m.SetSampler(slot, r.samplers[row.Req], row.Req.Prompt, row.Req.Generated...); err != nil {
				return false, err
			}
		}
		for i, t := range row.Tokens {
			rows = append(rows, llm.Row{Token: t, Pos: row.Pos + i, Table: row.Table})
			if row.Pos+i < len(row.Req.Prompt) {
				r.prefilled++
			}
		}
		if row.Sample {
			draws = append(draws, draw{row.Req, slot, len(rows) - 1, len(row.Req.Generated)})
		}
	}
	r.rows = rows
	r.peak = max(r.peak, len(st.Rows))
	sampled := make([]int32, len(draws))
	lps := make([]llm.TokenLogprob, len(draws))
	// every draw of the step at once, with the step: one wait for all on
	// a GPU, one pool pass for the step and its draws on the CPU
	ds := make([]llm.Draw, 0, len(draws))
	at := make([]int, 0, len(draws)) // ds[k] is draws[at[k]]
	for i, d := range draws {
		if d.slot < 0 {
			continue
		}
		sm := r.samplers[d.req]
		var lp *llm.TokenLogprob
		if sm.Logprobs {
			lp = &lps[i]
		}
		ds = append(ds, llm.Draw{Slot: d.slot, Row: d.row, Step: uint64(d.step), Top: sm.TopLogprobs, LP: lp})
		at = append(at, i)
	}
	toks := make([]int32, len(ds))
	ph.mark(r.Trace, &ph.prep)
	if err := r.m.StepSample(rows, ds, toks); err != nil {
		return false, err
	}
	ph.mark(r.Trace, &ph.run)
	ph.mark(r.Trace, &ph.sample)
	for k, i := range at {
		sampled[i] = toks[k]
		lps[i].Token = toks[k]
	}
	if err := r.s.Done(st, sampled); err != nil {
		return false, err
	}
	// Done takes a token unless its request ended while the step ran
	// (cancelled): only taken tokens reach the sinks.
	for i, d := range draws {
		if out := r.sinks[d.req]; out != nil && d.step < len(d.req.Generated) {
			out.token(sampled[i], lps[i])
		}
	}
	r.reapLocked()
	return true, nil
}

// phases are a traced step's times (Trace): its start, and when Next,
// the rows' slots and draws, and the model's step with its draws ended
// (sample, kept for the trace's readers, is 0: the draws run in the
// step's call).
type phases struct{ t0, next, prep, run, sample time.Time }

// mark sets *at to now when the step is traced.
func (*phases) mark(trace io.Writer, at *time.Time) {
	if trace != nil {
		*at = time.Now()
	}
}

// since is the µs from a to b (0 when b was not reached).
func since(a, b time.Time) int64 {
	if b.IsZero() {
		return 0
	}
	return b.Sub(a).Microseconds()
}

// trace writes st's line (Trace): a failed write is left alone, a trace
// never fails a step. After the step's fields come its phases' µs (next:
// the scheduler's Next, prep: block copies, sampler slots and the draws'
// list, run: the model's step and its draws, a GPU's wait for them
// included, sample: 0 since the draws joined the step's call) and the
// model's counts (a backend's, where it has them:
// graphs recorded, launches, waits, buffers grown).
func (r *Runner) trace(ph *phases, st Step) {
	decode, prompt, deepest := 0, 0, 0
	for _, row := range st.Rows {
		if len(row.Tokens) == 1 && row.Pos >= len(row.Req.Prompt) {
			decode++
		} else {
			prompt += len(row.Tokens)
		}
		deepest = max(deepest, row.Pos+len(row.Tokens)-1)
	}
	counts := ""
	if c, ok := r.m.(interface{ TraceCounts() string }); ok {
		counts = " " + c.TraceCounts()
	}
	r.tracef("step %d %d decode=%d prompt=%d seqs=%d deepest=%d next=%d prep=%d run=%d sample=%d%s\n",
		ph.t0.UnixMicro(), time.Since(ph.t0).Microseconds(), decode, prompt, len(st.Rows), deepest,
		since(ph.t0, ph.next), since(ph.next, ph.prep), since(ph.prep, ph.run), since(ph.run, ph.sample), counts)
}

// tracef writes a line to Trace (set), one writer at a time.
func (r *Runner) tracef(format string, args ...any) {
	r.traceMu.Lock()
	defer r.traceMu.Unlock()
	fmt.Fprintf(r.Trace, format, args...)
}

// Fail ends every request with err (the model failed a step): none is
// dropped silently.
func (r *Runner) Fail(err error) {
	r.s.failAll(err)
	r.reap()
}

// reap gives the slots of ended requests back.
func (r *Runner) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
}

func (r *Runner) reapLocked() {
	for req := range r.samplers {
		ended, preempted, err := r.s.state(req)
		if !ended && !preempted {
			continue
		}
		if slot, ok := r.slots[req]; ok {
			delete(r.slots, req)
			r.free = append(r.free, slot)
		}
		if !ended {
			continue // it resumes in whichever slot is free then
		}
		delete(r.samplers, req)
		if out := r.sinks[req]; out != nil {
			delete(r.sinks, req)
			out.end(err)
		}
	}
}

// Package batch is continuous batching's scheduler: at every step it
// decides which tokens of which sequences the model computes together,
// over a paged KV cache (engine/kvpage). Running sequences decode one
// token each first; prompts are prefilled in chunks in the step's
// remaining token budget, so a long prompt never stalls the streams
// already running; waiting requests are admitted as room allows, higher
// priority first (dictation clean-up before API chat), then in arrival
// order. A request whose prompt starts with full blocks another running
// request is still prefilling waits for them, so a prefix shared by many
// requests is computed once. It holds no model: a step is a list of rows
// for a batched forward pass to run.
package batch

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/harkapp/hark/engine/kvpage"
	"github.com/harkapp/hark/engine/llm"
)

// Request is one generation the scheduler runs.
type Request struct {
	Prompt    []int32
	MaxTokens int // generated tokens at most (> 0)
	Priority  int // higher first
	// Generated are the tokens sampled so far; Err is set when the
	// request failed (never silently dropped), Done when it ended.
	Generated []int32
	Err       error
	Done      bool
	seq       *kvpage.Seq
	arrival   int64
}

// Row is one sequence's part of a step: its tokens at positions Pos...,
// read and written through Table; Sample: the last token's logits choose
// the request's next token.
type Row struct {
	Req    *Request
	Pos    int
	Tokens []int32
	Table  []int32
	Sample bool
}

// Step is one batched forward pass: block copies first, then the rows.
type Step struct {
	Copies []kvpage.Copy
	Rows   []Row
}

// Tokens is the step's token count (its rows' tokens).
func (s Step) Tokens() int {
	n := 0
	for _, r := range s.Rows {
		n += len(r.Tokens)
	}
	return n
}

// Options bound a step.
type Options struct {
	TokenBudget int // tokens a step computes at most (decode rows count 1)
	MaxSeqs     int // sequences running at once
	// PromptBeside is the most prompt tokens a step computes while it
	// also carries decode rows (0: TokenBudget): a step's cost grows with
	// its prompt rows, and the running streams wait for the whole step.
	PromptBeside int
	// LongPrompt, when positive, limits PromptBeside to the prompts of
	// more than LongPrompt tokens (a resumed request's generated tokens
	// counted with its prompt, as it computes them): a shorter prompt still takes the whole
	// budget beside decode rows (many short prompts arriving together are
	// admitted as fast as without PromptBeside), a long one takes
	// PromptBeside tokens a step while streams run.
	LongPrompt int
	// StepCost, when set, is what a step of n rows costs (a cost model
	// measured per backend and tuning: StepCost.At), and BesideCost bounds
	// a step that carries decode rows: its prompt rows, any prompt's, are
	// the most whose step costs at most BesideCost times the decode rows'
	// own step (at least one row), so a running stream's token waits at
	// most ~BesideCost times its normal time while prompts are admitted
	// (issue #38). PromptBeside still bounds the long prompts within that.
	StepCost   StepCost
	BesideCost float64
	// Buckets are the row counts the model pads a step's rows up to
	// (llm.BatchOptions.Buckets): a step of n rows costs StepCost at
	// llm.BucketRows(Buckets, n), so the prompt rows beside decode rows
	// fill the bucket the bound allows.
	Buckets []int
}

// StepCost is a step's cost against its rows: points (Rows ascending),
// linear between them, the first point's cost below it and the last's
// slope past it.
type StepCost []CostPoint

// CostPoint is one measured step: Rows rows took Cost (any unit).
type CostPoint struct {
	Rows int
	Cost float64
}

// At is a step of n rows' cost.
func (c StepCost) At(n int) float64 {
	i, _ := slices.BinarySearchFunc(c, n, func(p CostPoint, n int) int { return cmp.Compare(p.Rows, n) })
	switch {
	case len(c) == 0:
		return 0
	case i < len(c) && c[i].Rows == n:
		return c[i].Cost
	case i == 0:
		return c[0].Cost
	case i == len(c) && len(c) == 1:
		return c[0].Cost
	case i == len(c):
		i-- // past the last point: its segment's slope
	}
	a, b := c[i-1], c[i]
	return a.Cost + (b.Cost-a.Cost)*float64(n-a.Rows)/float64(b.Rows-a.Rows)
}

// ParseStepCost reads a StepCost written "rows:cost,rows:cost,..." (rows
// ascending from 1, costs positive); "" is none.
func ParseStepCost(v string) (StepCost, error) {
	if v == "" {
		return nil, nil
	}
	var c StepCost
	for _, f := range strings.Split(v, ",") {
		rs, cs, ok := strings.Cut(strings.TrimSpace(f), ":")
		n, err1 := strconv.Atoi(rs)
		x, err2 := strconv.ParseFloat(cs, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || !(x > 0) || (len(c) > 0 && n <= c[len(c)-1].Rows) {
			return nil, fmt.Errorf("batch: step cost %q: want rows:cost, rows ascending from 1, costs positive", f)
		}
		c = append(c, CostPoint{Rows: n, Cost: x})
	}
	return c, nil
}

// besideRows is the most prompt rows (at least 1, at most limit) a step
// with decode rows takes under StepCost and BesideCost (limit without
// them).
func (o Options) besideRows(decode, limit int) int {
	if len(o.StepCost) == 0 || o.BesideCost <= 0 || decode == 0 {
		return limit
	}
	cost := func(n int) float64 { return o.StepCost.At(llm.BucketRows(o.Buckets, n)) }
	most := o.BesideCost * cost(decode)
	p := 1
	for p < limit && cost(decode+p+1) <= most {
		p++
	}
	return min(p, limit)
}

// besideBound reports whether PromptBeside bounds r's chunks beside
// decode rows.
func (o Options) besideBound(r *Request) bool {
	return o.PromptBeside > 0 && (o.LongPrompt <= 0 || len(r.Prompt)+len(r.Generated) > o.LongPrompt)
}

// Scheduler runs requests over one model's pool. Its methods are safe for
// concurrent use: Cancel comes from a request's goroutine.
type Scheduler struct {
	mu      sync.Mutex
	pool    *kvpage.Pool
	opt     Options
	waiting []*Request
	running []*Request
	arrival int64
}

// New makes a scheduler over pool.
func New(pool *kvpage.Pool, o Options) (*Scheduler, error) {
	if o.TokenBudget < 1 || o.MaxSeqs < 1 {
		return nil, errors.New("batch: the token budget and the sequence count must be positive")
	}
	return &Scheduler{pool: pool, opt: o}, nil
}

// ErrCanceled ends a cancelled request.
var ErrCanceled = errors.New("batch: the request was cancelled")

// Submit queues r.
func (s *Scheduler) Submit(r *Request) error {
	if len(r.Prompt) == 0 || r.MaxTokens < 1 {
		return errors.New("batch: a request needs a prompt and max tokens")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrival++
	r.arrival = s.arrival
	s.wait(r)
	return nil
}

// arrivalOf is r's arrival number (Submit's order), naming it in a trace.
func (s *Scheduler) arrivalOf(r *Request) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.arrival
}

// rank orders requests: higher priority, then earlier arrival.
func rank(a, b *Request) int {
	return cmp.Or(-cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.arrival, b.arrival))
}

// wait puts r in the waiting queue at its rank (a preempted request
// keeps its arrival, so it goes back ahead of later ones).
func (s *Scheduler) wait(r *Request) {
	i, _ := slices.BinarySearchFunc(s.waiting, r, rank)
	s.waiting = slices.Insert(s.waiting, i, r)
}

// Cancel ends r now: its blocks go back to the pool at once.
func (s *Scheduler) Cancel(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finish(r, ErrCanceled)
}

// finish ends r, freeing its blocks.
func (s *Scheduler) finish(r *Request, err error) {
	if r.Done {
		return
	}
	if r.seq != nil {
		s.pool.Free(r.seq)
	}
	r.Done, r.Err = true, err
	s.running = slices.DeleteFunc(s.running, func(o *Request) bool { return o == r })
	s.waiting = slices.DeleteFunc(s.waiting, func(o *Request) bool { return o == r })
}

// Ended reports whether r has ended (done, failed or cancelled).
func (s *Scheduler) Ended(r *Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.Done
}

// state reports whether r has ended (and its error), and whether it
// waits preempted (its blocks taken for another, to be computed again).
func (s *Scheduler) state(r *Request) (ended, preempted bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return r.Done, !r.Done && r.seq != nil && r.seq.Preempted(), r.Err
}

// failAll ends every waiting and running request with err.
func (s *Scheduler) failAll(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range slices.Concat(s.running, s.waiting) {
		s.finish(r, err)
	}
}

// Pending reports whether any request waits or runs.
func (s *Scheduler) Pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)+len(s.running) > 0
}

// Next builds the next step: the running requests' rows in rank order
// (decodes, then the rest of prefills), then newly admitted requests'
// first chunks, within the token budget (and, after decode rows, within
// the rows StepCost and BesideCost allow, and PromptBeside). An empty
// step: nothing to run.
func (s *Scheduler) Next() Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Step
	budget := s.opt.TokenBudget
	// beside is what the prompts PromptBeside bounds may still take this
	// step, once it carries decode rows
	beside := budget
	slices.SortFunc(s.running, rank)
	// take is the tokens r's chunk may take now
	take := func(r *Request) int {
		if s.opt.besideBound(r) {
			return min(budget, beside)
		}
		return budget
	}
	// took counts n tokens of r's chunk against the budgets
	took := func(r *Request, n int) {
		budget -= n
		if s.opt.besideBound(r) {
			beside -= n
		}
	}
	// Decodes first: a stream's next token never waits for a prompt.
	for _, decode := range []bool{true, false} {
		if !decode && len(st.Rows) > 0 {
			// beside the decode rows: the prompt rows the step's cost allows
			budget = s.opt.besideRows(len(st.Rows), budget)
			if s.opt.PromptBeside > 0 {
				beside = min(budget, s.opt.PromptBeside)
			}
		}
		for _, r := range slices.Clone(s.running) {
			if r.Done || r.seq.Preempted() || (r.seq.Len()-r.seq.Computed() == 1) != decode {
				continue
			}
			if budget == 0 {
				break
			}
			if n := take(r); n > 0 {
				took(r, s.row(&st, r, n))
			}
		}
	}
	for budget > 0 && len(s.waiting) > 0 && len(s.running) < s.opt.MaxSeqs {
		r := s.waiting[0]
		if s.prefixPending(r) {
			break // its prefix is being computed: take it from the cache after
		}
		if take(r) == 0 {
			break // a long prompt with no room beside this step's streams: it keeps its place
		}
		s.waiting = s.waiting[1:]
		if r.seq == nil {
			r.seq = s.pool.Add(append(slices.Clone(r.Prompt), r.Generated...), r.Priority)
		} else if err := s.pool.Resume(r.seq); err != nil {
			s.finish(r, err)
			continue
		}
		s.running = append(s.running, r)
		n := s.row(&st, r, take(r))
		if n == 0 {
			break // no room: it went back to waiting
		}
		took(r, n)
	}
	return st
}

// row adds r's next chunk (at most budget tokens) to st, making room in
// the pool, and returns its token count. Requests the pool preempted for
// it go back to waiting, their rows (if built this step) dropped; when
// there is no room, r itself waits (or fails, when it runs alone and still
// does not fit).
func (s *Scheduler) row(st *Step, r *Request, budget int) int {
	q := r.seq
	from := q.Computed()
	to := min(q.Len(), from+budget)
	g, err := s.pool.Grow(q, to)
	for _, v := range g.Preempted {
		for _, o := range s.running {
			if o.seq == v {
				s.running = slices.DeleteFunc(s.running, func(x *Request) bool { return x == o })
				st.Rows = slices.DeleteFunc(st.Rows, func(x Row) bool { return x.Req == o })
				s.wait(o)
				break
			}
		}
	}
	if err != nil {
		if len(s.running) == 1 {
			s.finish(r, err) // alone and still over the budget: a clear error
			return 0
		}
		s.pool.Preempt(q)
		s.running = slices.DeleteFunc(s.running, func(x *Request) bool { return x == r })
		s.wait(r)
		return 0
	}
	st.Copies = append(st.Copies, g.Copies...)
	toks := q.Tokens()[from:to]
	st.Rows = append(st.Rows, Row{Req: r, Pos: from, Tokens: toks, Table: q.Table(), Sample: to == q.Len()})
	return len(toks)
}

// prefixPending reports that a running request still prefilling shares a
// full block of r's prompt that the cache does not hold yet.
func (s *Scheduler) prefixPending(r *Request) bool {
	bs := s.pool.BlockSize()
	for _, o := range s.running {
		if o.seq.Computed() >= len(o.Prompt) {
			continue
		}
		n := 0
		for n < len(r.Prompt) && n < len(o.Prompt) && r.Prompt[n] == o.Prompt[n] {
			n++
		}
		if n/bs > o.seq.Computed()/bs {
			return true
		}
	}
	return false
}

// Done records the step's results: each sampling row's token, in the
// order of st.Rows' sampling rows. A request that reached MaxTokens ends.
func (s *Scheduler) Done(st Step, sampled []int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for _, row := range st.Rows {
		r := row.Req
		if r.Done || r.seq.Preempted() {
			if row.Sample {
				i++
			}
			continue // cancelled while the step ran
		}
		if err := s.pool.Computed(r.seq, row.Pos+len(row.Tokens)); err != nil {
			return err
		}
		if !row.Sample {
			continue
		}
		if i >= len(sampled) {
			return errors.New("batch: fewer sampled tokens than sampling rows")
		}
		t := sampled[i]
		i++
		r.Generated = append(r.Generated, t)
		if len(r.Generated) >= r.MaxTokens {
			s.finish(r, nil)
			continue
		}
		s.pool.Append(r.seq, t)
	}
	return nil
}

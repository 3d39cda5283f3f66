package batch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/harkapp/hark/engine/llm"
)

// Model is the M-sequence step a Runner drives (llm.Batch).
type Model interface {
	Step(rows []llm.Row) error
	SetSampler(slot int, s llm.Sampler, ctx []int32) error
	Sample(slot, row int, step uint64, top int, lp *llm.TokenLogprob) (int32, error)
	CopyBlock(src, dst int32, positions int) error
}

// Runner runs a Scheduler's steps on a model: block copies, then one
// batched step over every row, then each sampling row's token drawn with
// its request's own sampler (a slot of the model's per-sequence sampler
// state, held while the request runs).
type Runner struct {
	s *Scheduler
	m Model

	mu       sync.Mutex
	samplers map[*Request]llm.Sampler
	slots    map[*Request]int
	free     []int
	// prefilled counts the prompt positions the model computed (prefix
	// sharing shows here: tests, metrics).
	prefilled int
	rows      []llm.Row
}

// NewRunner drives s on m, which holds seqs sampler slots (at least the
// scheduler's MaxSeqs).
func NewRunner(s *Scheduler, m Model, seqs int) (*Runner, error) {
	if seqs < s.opt.MaxSeqs {
		return nil, fmt.Errorf("batch: %d sampler slots for %d running sequences", seqs, s.opt.MaxSeqs)
	}
	r := &Runner{s: s, m: m, samplers: map[*Request]llm.Sampler{}, slots: map[*Request]int{}}
	for i := range seqs {
		r.free = append(r.free, i)
	}
	return r, nil
}

// Submit queues req, to be sampled with sm.
func (r *Runner) Submit(req *Request, sm llm.Sampler) error {
	if err := r.s.Submit(req); err != nil {
		return err
	}
	r.mu.Lock()
	r.samplers[req] = sm
	r.mu.Unlock()
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

// Step runs one scheduler step; false when nothing was left to run.
func (r *Runner) Step() (bool, error) {
	st := r.s.Next()
	if len(st.Rows) == 0 {
		r.reap()
		return r.s.Pending(), nil
	}
	for _, c := range st.Copies {
		if err := r.m.CopyBlock(c.Src, c.Dst, c.Positions); err != nil {
			return false, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rows := r.rows[:0]
	type draw struct{ slot, row, step int }
	var draws []draw
	for _, row := range st.Rows {
		slot, ok := r.slots[row.Req]
		if !ok {
			if len(r.free) == 0 {
				return false, errors.New("batch: more running sequences than sampler slots")
			}
			slot, r.free = r.free[0], r.free[1:]
			r.slots[row.Req] = slot
			// the slot is the request's until it ends (a preempted
			// request keeps its sampler state), so its context is the
			// prompt
			if err := r.m.SetSampler(slot, r.samplers[row.Req], row.Req.Prompt); err != nil {
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
			draws = append(draws, draw{slot, len(rows) - 1, len(row.Req.Generated)})
		}
	}
	r.rows = rows
	if err := r.m.Step(rows); err != nil {
		return false, err
	}
	sampled := make([]int32, len(draws))
	for i, d := range draws {
		tok, err := r.m.Sample(d.slot, d.row, uint64(d.step), 0, nil)
		if err != nil {
			return false, err
		}
		sampled[i] = tok
	}
	if err := r.s.Done(st, sampled); err != nil {
		return false, err
	}
	r.reapLocked()
	return true, nil
}

// reap gives the slots of ended requests back.
func (r *Runner) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
}

func (r *Runner) reapLocked() {
	for req := range r.samplers {
		if !r.s.Ended(req) {
			continue
		}
		delete(r.samplers, req)
		if slot, ok := r.slots[req]; ok {
			delete(r.slots, req)
			r.free = append(r.free, slot)
		}
	}
}

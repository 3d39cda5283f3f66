package kvpage

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Seq is one sequence's place in the pool: its tokens, its block table,
// and how many of its positions the backend has computed. A Seq belongs
// to the pool that made it; use it through the pool's methods.
type Seq struct {
	// Priority orders preemption: a sequence is only preempted for one of
	// higher priority, or of the same priority that arrived earlier.
	Priority int
	arrival  int64
	tokens   []int32
	table    []int32
	computed int
	// keys are the prefix keys of the full computed blocks, in order
	// (the next block's key chains from the last).
	keys      []prefixKey
	preempted bool
	freed     bool
}

// Table is the sequence's block table: position i lives in block
// Table()[i/BlockSize] at row i%BlockSize. The slice is the caller's.
func (s *Seq) Table() []int32 { return slices.Clone(s.table) }

// Len is the sequence's tokens: prompt and generated.
func (s *Seq) Len() int { return len(s.tokens) }

// Tokens are the sequence's tokens (the caller's copy).
func (s *Seq) Tokens() []int32 { return slices.Clone(s.tokens) }

// Computed is how many leading positions hold computed keys and values:
// prefill starts there.
func (s *Seq) Computed() int { return s.computed }

// Preempted reports that the pool took the sequence's blocks for another;
// its tokens are kept, and Resume puts it back to be computed again.
func (s *Seq) Preempted() bool { return s.preempted }

// Copy is a block the backend must copy before the step that follows:
// the first Positions rows of every layer's keys and values of block Src
// into block Dst (copy-on-write of a block shared with another sequence).
type Copy struct {
	Src, Dst  int32
	Positions int
}

// Growth is what making room did besides handing out blocks: copies the
// backend must make, and the sequences preempted for it, which the caller
// must queue again (Resume), never drop.
type Growth struct {
	Copies    []Copy
	Preempted []*Seq
}

// Add starts a sequence of tokens (a prompt): the full blocks of its
// prefix that the pool has computed for another sequence are taken by
// reference, and Computed says how many positions they hold. The last
// prompt token is always left to compute (its logits choose the next
// token), so at most len(tokens)-1 positions come from the cache.
func (p *Pool) Add(tokens []int32, priority int) *Seq {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.arrival++
	s := &Seq{Priority: priority, arrival: p.arrival, tokens: slices.Clone(tokens)}
	p.match(s)
	p.running[s] = true
	return s
}

// match takes the cached blocks of s's prefix.
func (p *Pool) match(s *Seq) {
	var parent *prefixKey
	for i := 0; (i+1)*p.size < len(s.tokens); i++ {
		k := keyOf(parent, s.tokens[i*p.size:(i+1)*p.size])
		b, ok := p.prefix[k]
		if !ok {
			break
		}
		p.blocks[b].refs++
		s.table = append(s.table, b)
		s.keys = append(s.keys, k)
		parent = &s.keys[len(s.keys)-1]
	}
	s.computed = len(s.table) * p.size
}

// Resume puts a preempted sequence back: it takes what the prefix cache
// still holds of its tokens, and the rest is computed again.
func (p *Pool) Resume(s *Seq) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !s.preempted || s.freed {
		return errors.New("kvpage: only a preempted sequence resumes")
	}
	s.preempted = false
	p.match(s)
	p.running[s] = true
	return nil
}

// Append records a token generated for s (its position is Len()-1 after).
func (p *Pool) Append(s *Seq, tok int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.tokens = append(s.tokens, tok)
}

// Grow makes room for s's positions below n, those the next step writes
// (a prefill chunk, or the one a decode step writes): blocks for them,
// and a private copy of a shared block the step would write into. When
// the pool is out of blocks it preempts sequences that rank below s, the
// lowest priority and latest arrival first, and returns them. ErrNoRoom:
// even that could not make room (s alone is over the budget, or the rest
// outrank it); s keeps what it had.
func (p *Pool) Grow(s *Seq, n int) (Growth, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var g Growth
	if s.preempted || s.freed {
		return g, errors.New("kvpage: the sequence is not running")
	}
	if n > len(s.tokens)+1 {
		return g, fmt.Errorf("kvpage: room for %d positions asked of a sequence of %d tokens", n, len(s.tokens))
	}
	need := (n+p.size-1)/p.size - len(s.table)
	// The step writes from position s.computed: a block there that others
	// hold too is copied first (a fork's partly filled last block).
	w := s.computed / p.size
	cow := s.computed < n && w < len(s.table) && p.blocks[s.table[w]].refs > 1
	want := max(need, 0)
	if cow {
		want++
	}
	for p.available() < want {
		v := p.victim(s)
		if v == nil {
			return g, ErrNoRoom
		}
		p.preempt(v)
		g.Preempted = append(g.Preempted, v)
	}
	if cow {
		b, _ := p.take()
		g.Copies = append(g.Copies, Copy{Src: s.table[w], Dst: b, Positions: s.computed - w*p.size})
		p.release(s.table[w])
		s.table[w] = b
	}
	for range need {
		b, _ := p.take()
		s.table = append(s.table, b)
	}
	return g, nil
}

// victim is the running sequence to preempt for s: of those ranking below
// it, the lowest priority, then the latest arrival; nil when none does.
func (p *Pool) victim(s *Seq) *Seq {
	var v *Seq
	below := func(a, b *Seq) bool { // a ranks below b
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), -cmp.Compare(a.arrival, b.arrival)) < 0
	}
	for o := range p.running {
		if o != s && len(o.table) > 0 && below(o, s) && (v == nil || below(o, v)) {
			v = o
		}
	}
	return v
}

// Preempt frees s's blocks now, keeping its tokens for Resume (a
// scheduler preempting a sequence that found no room).
func (p *Pool) Preempt(s *Seq) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !s.preempted && !s.freed {
		p.preempt(s)
	}
}

// preempt frees s's blocks, keeping its tokens to compute again.
func (p *Pool) preempt(s *Seq) {
	p.drop(s)
	s.preempted = true
}

// drop releases s's blocks and takes it off the running set. The last
// block goes first, so it is the first evicted: a prefix's head, which
// more sequences share, stays cached longest.
func (p *Pool) drop(s *Seq) {
	for i := len(s.table) - 1; i >= 0; i-- {
		p.release(s.table[i])
	}
	s.table, s.keys, s.computed = nil, nil, 0
	delete(p.running, s)
}

// Computed records that the backend wrote s's positions below n: the full
// blocks among them join the prefix cache, for sequences that start the
// same way.
func (p *Pool) Computed(s *Seq, n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.preempted || s.freed {
		return errors.New("kvpage: the sequence is not running")
	}
	if n > len(s.tokens) || n > len(s.table)*p.size {
		return fmt.Errorf("kvpage: %d positions computed of %d tokens in %d blocks", n, len(s.tokens), len(s.table))
	}
	s.computed = max(s.computed, n)
	for i := len(s.keys); (i+1)*p.size <= s.computed; i++ {
		var parent *prefixKey
		if i > 0 {
			parent = &s.keys[i-1]
		}
		k := keyOf(parent, s.tokens[i*p.size:(i+1)*p.size])
		s.keys = append(s.keys, k)
		b := s.table[i]
		if _, ok := p.prefix[k]; !ok && !p.blocks[b].keyed {
			p.prefix[k] = b
			p.blocks[b].key, p.blocks[b].keyed = k, true
		}
	}
	return nil
}

// Fork starts a sequence that shares all of s's blocks and tokens (a
// beam, n > 1): whichever writes first into the shared, partly filled
// last block gets its own copy (Grow's Copies).
func (p *Pool) Fork(s *Seq) (*Seq, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.preempted || s.freed {
		return nil, errors.New("kvpage: the sequence is not running")
	}
	p.arrival++
	f := &Seq{Priority: s.Priority, arrival: p.arrival, tokens: slices.Clone(s.tokens), table: slices.Clone(s.table),
		computed: s.computed, keys: slices.Clone(s.keys)}
	for _, b := range f.table {
		p.blocks[b].refs++
	}
	p.running[f] = true
	return f, nil
}

// Free ends s (finished or cancelled): its blocks go back at once, the
// computed full ones staying cached for later prefixes. Freeing twice is
// harmless.
func (p *Pool) Free(s *Seq) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.freed {
		return
	}
	p.drop(s)
	s.freed = true
}

// Package kvpage is the paged KV cache's bookkeeping (vLLM's
// PagedAttention): a model's cache is one pool of fixed-size blocks of
// positions, and each sequence holds a block table, the blocks its
// positions live in, in order. An attention kernel reads a sequence's keys
// and values through its table, so sequences of any length share one
// buffer without reserving a whole context each.
//
// Full blocks of computed prompt are keyed by their content and the
// content before them, so a sequence that starts the way another did
// (the same system prompt, the same conversation so far) takes those
// blocks by reference instead of computing them again. A block whose last
// holder finished stays cached until its room is needed.
//
// The package holds no tensors: it hands out block numbers, and names the
// copies (copy-on-write) the backend must make. It is the same for every
// backend.
package kvpage

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNoRoom is returned when the pool cannot hold a sequence even after
// preempting every sequence it may preempt.
var ErrNoRoom = errors.New("kvpage: the KV cache budget cannot hold this sequence")

// BlockBytes is the memory one block takes: keys and values of size
// positions, for every layer, at kvDim elements of elemBytes each.
func BlockBytes(layers, kvDim, size, elemBytes int) int64 {
	return 2 * int64(layers) * int64(kvDim) * int64(size) * int64(elemBytes)
}

// Config sizes a pool.
type Config struct {
	BlockSize int   // positions per block
	Budget    int64 // bytes the pool may take
	// BlockBytes is one block's size (BlockBytes()).
	BlockBytes int64
}

// block is one block's state.
type block struct {
	refs int
	// key is set once the block is full of computed tokens: the prefix
	// cache's name for it.
	key    prefixKey
	keyed  bool
	cached int64 // when it was last released with refs 0 (LRU order)
}

// Pool is one model's blocks. Its methods are safe for concurrent use (a
// request's cancel frees its blocks from the request's goroutine).
type Pool struct {
	mu     sync.Mutex
	size   int
	blocks []block
	free   []int32 // blocks holding nothing
	// prefix maps a full computed block's key to it; entries whose block
	// has no holder are evictable, oldest release first.
	prefix  map[prefixKey]int32
	clock   int64
	arrival int64
	running map[*Seq]bool
}

// New makes a pool of as many blocks as cfg.Budget holds.
func New(cfg Config) (*Pool, error) {
	if cfg.BlockSize < 1 || cfg.BlockBytes < 1 {
		return nil, fmt.Errorf("kvpage: block size %d and block bytes %d must be positive", cfg.BlockSize, cfg.BlockBytes)
	}
	n := cfg.Budget / cfg.BlockBytes
	if n < 1 {
		return nil, fmt.Errorf("kvpage: a budget of %d bytes holds no block of %d", cfg.Budget, cfg.BlockBytes)
	}
	if n > 1<<30 {
		n = 1 << 30
	}
	p := &Pool{size: cfg.BlockSize, blocks: make([]block, n), prefix: map[prefixKey]int32{}, running: map[*Seq]bool{}}
	p.free = make([]int32, n)
	for i := range p.free {
		p.free[i] = int32(n) - 1 - int32(i) // pop from the end: block 0 first
	}
	return p, nil
}

// BlockSize is the positions a block holds.
func (p *Pool) BlockSize() int { return p.size }

// Blocks is the pool's size in blocks.
func (p *Pool) Blocks() int { return len(p.blocks) }

// Available is how many blocks could be handed out now without
// preempting: empty ones and cached ones no sequence holds.
func (p *Pool) Available() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.available()
}

func (p *Pool) available() int {
	n := len(p.free)
	for _, b := range p.prefix {
		if p.blocks[b].refs == 0 {
			n++
		}
	}
	return n
}

// take hands out a block: an empty one, else the cached one released
// longest ago (its prefix entry dropped). ok is false when none is left.
func (p *Pool) take() (int32, bool) {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		p.blocks[b] = block{refs: 1}
		return b, true
	}
	victim, oldest := int32(-1), int64(0)
	// A scan: evictions are rare next to steps, and the map is at most
	// the pool's size.
	for _, b := range p.prefix {
		if p.blocks[b].refs == 0 && (victim < 0 || p.blocks[b].cached < oldest) {
			victim, oldest = b, p.blocks[b].cached
		}
	}
	if victim < 0 {
		return 0, false
	}
	delete(p.prefix, p.blocks[victim].key)
	p.blocks[victim] = block{refs: 1}
	return victim, true
}

// release drops one reference to b: a block no sequence holds goes back
// to the free list, or stays cached if the prefix cache names it.
func (p *Pool) release(b int32) {
	bl := &p.blocks[b]
	if bl.refs <= 0 {
		panic(fmt.Sprintf("kvpage: block %d released more often than held", b))
	}
	bl.refs--
	if bl.refs > 0 {
		return
	}
	if bl.keyed {
		p.clock++
		bl.cached = p.clock
		return
	}
	p.free = append(p.free, b)
}

// Refs is how many sequences hold block b (tests, metrics).
func (p *Pool) Refs(b int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blocks[b].refs
}

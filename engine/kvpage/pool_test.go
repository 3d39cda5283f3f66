package kvpage

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// pool is a pool of n blocks of 4 positions.
func pool(t *testing.T, n int) *Pool {
	t.Helper()
	p, err := New(Config{BlockSize: 4, Budget: int64(n) * 100, BlockBytes: 100})
	require.NoError(t, err)
	require.Equal(t, n, p.Blocks())
	return p
}

func seqTokens(n int, base int32) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = base + int32(i)
	}
	return t
}

// run computes s up to its length the way a scheduler would: room, then
// the step, then Computed.
func run(t *testing.T, p *Pool, s *Seq) Growth {
	t.Helper()
	g, err := p.Grow(s, s.Len())
	require.NoError(t, err)
	require.NoError(t, p.Computed(s, s.Len()))
	return g
}

// Blocks come from the budget; a sequence gets one per 4 positions as it
// grows, each block once; freeing returns them.
func TestAllocation(t *testing.T) {
	require.Equal(t, int64(2*30*64*16*2), BlockBytes(30, 64, 16, 2))
	_, err := New(Config{BlockSize: 4, Budget: 99, BlockBytes: 100})
	require.Error(t, err)

	p := pool(t, 8)
	a := p.Add(seqTokens(6, 0), 0)
	require.Equal(t, 0, a.Computed())
	run(t, p, a)
	require.Len(t, a.Table(), 2)
	require.Equal(t, 6, p.Available())
	for i := range 3 { // positions 6..8: the third block at position 8
		p.Append(a, int32(100+i))
		_, err := p.Grow(a, a.Len())
		require.NoError(t, err)
		require.NoError(t, p.Computed(a, a.Len()))
	}
	tab := a.Table()
	require.Len(t, tab, 3)
	seen := map[int32]bool{}
	for _, b := range tab {
		require.False(t, seen[b])
		seen[b] = true
		require.Equal(t, 1, p.Refs(b))
	}
	_, err = p.Grow(a, a.Len()+2)
	require.Error(t, err, "room only up to the next token")
	p.Free(a)
	p.Free(a)
	require.Equal(t, 8, p.Available())
}

// Sixteen sequences sharing a 12-token system prompt: the first computes
// it, the others take its three blocks by reference and compute only their
// own part; the blocks' counts follow the holders, and the shared blocks
// stay cached after all of them end.
func TestPrefixSharing(t *testing.T) {
	p := pool(t, 64)
	system := seqTokens(12, 1000)
	prompt := func(i int) []int32 { return append(append([]int32{}, system...), int32(i), int32(i), int32(i)) }
	prefilled := 0
	var seqs []*Seq
	for i := range 16 {
		s := p.Add(prompt(i), 0)
		prefilled += s.Len() - s.Computed()
		run(t, p, s)
		seqs = append(seqs, s)
	}
	require.Equal(t, 15+15*3, prefilled, "the shared 12 tokens computed once")
	shared := seqs[0].Table()[:3]
	for _, s := range seqs[1:] {
		require.Equal(t, shared, s.Table()[:3])
	}
	for _, b := range shared {
		require.Equal(t, 16, p.Refs(b))
	}
	require.NotEqual(t, seqs[0].Table()[3], seqs[1].Table()[3], "the last, partial block is each one's own")
	for _, s := range seqs {
		p.Free(s)
	}
	require.Equal(t, 0, p.Refs(shared[0]))
	require.Equal(t, 64, p.Available())
	// A prompt that is exactly the cached blocks still computes its last
	// token (its logits pick the next), so takes only two of them.
	s := p.Add(system, 0)
	require.Equal(t, 8, s.Computed())
	require.Equal(t, shared[:2], s.Table())
	// A different start shares nothing.
	o := p.Add(append([]int32{7}, system...), 0)
	require.Equal(t, 0, o.Computed())
}

// A fork shares the partly filled last block; the first to write into it
// gets its own copy (the rows computed so far copied), the other keeps
// the original, and full blocks stay shared.
func TestCopyOnWrite(t *testing.T) {
	p := pool(t, 8)
	a := p.Add(seqTokens(6, 0), 0) // blocks: [0..3] full, [4,5] partial
	run(t, p, a)
	b, err := p.Fork(a)
	require.NoError(t, err)
	ta := a.Table()
	require.Equal(t, ta, b.Table())
	require.Equal(t, 2, p.Refs(ta[1]))

	p.Append(b, 50)
	g, err := p.Grow(b, b.Len())
	require.NoError(t, err)
	require.Len(t, g.Copies, 1)
	c := g.Copies[0]
	require.Equal(t, ta[1], c.Src)
	require.Equal(t, 2, c.Positions, "the two computed rows")
	tb := b.Table()
	require.Equal(t, c.Dst, tb[1])
	require.Equal(t, ta[0], tb[0], "the full block stays shared")
	require.Equal(t, 2, p.Refs(ta[0]))
	require.Equal(t, 1, p.Refs(ta[1]))
	require.Equal(t, 1, p.Refs(tb[1]))

	// a now holds its block alone: no copy.
	p.Append(a, 60)
	g, err = p.Grow(a, a.Len())
	require.NoError(t, err)
	require.Empty(t, g.Copies)
	require.Equal(t, ta, a.Table())
}

// Out of blocks, a sequence preempts the lowest-ranking one (lower
// priority first, then the latest arrival), which keeps its tokens and
// resumes later, taking back what the prefix cache still has; one that
// outranks every other running sequence is never preempted, and a
// sequence over the whole budget gets ErrNoRoom, keeping what it had.
func TestBudgetAndPreemption(t *testing.T) {
	p := pool(t, 6)
	first := p.Add(seqTokens(8, 0), 0) // 2 blocks
	run(t, p, first)
	late := p.Add(seqTokens(8, 100), 0) // 2 blocks
	run(t, p, late)
	low := p.Add(seqTokens(4, 200), -1) // 1 block
	run(t, p, low)
	require.Equal(t, 1, p.Available())

	// first grows by two blocks: low goes first, then nothing else is
	// needed.
	for i := range 5 {
		p.Append(first, int32(300+i))
	}
	g, err := p.Grow(first, first.Len())
	require.NoError(t, err)
	require.Equal(t, []*Seq{low}, g.Preempted)
	require.True(t, low.Preempted())
	require.Equal(t, seqTokens(4, 200), low.Tokens(), "tokens kept to recompute")
	require.NoError(t, p.Computed(first, first.Len()))

	// More: late (arrived after first) is preempted, never first.
	for i := range 4 {
		p.Append(first, int32(400+i))
	}
	g, err = p.Grow(first, first.Len())
	require.NoError(t, err)
	require.Equal(t, []*Seq{late}, g.Preempted)
	_, err = p.Grow(late, late.Len())
	require.Error(t, err, "a preempted sequence grows only after Resume")

	// late cannot preempt first, which outranks it: no room, nothing lost.
	require.NoError(t, p.Resume(late))
	require.Equal(t, 4, late.Computed(), "its first block was still cached")
	_, err = p.Grow(late, late.Len())
	require.ErrorIs(t, err, ErrNoRoom)
	require.False(t, first.Preempted())

	// Over the whole budget: ErrNoRoom.
	big := p.Add(seqTokens(40, 900), 5)
	_, err = p.Grow(big, big.Len())
	require.ErrorIs(t, err, ErrNoRoom)
	p.Free(big)
}

// Cancelling a sequence frees its blocks at once, for the next one; a
// block another sequence shares stays with it.
func TestCancelFrees(t *testing.T) {
	p := pool(t, 4)
	a := p.Add(seqTokens(10, 0), 0) // 3 blocks
	run(t, p, a)
	b, err := p.Fork(a)
	require.NoError(t, err)
	require.Equal(t, 1, p.Available())
	p.Free(a) // cancelled
	for _, blk := range b.Table() {
		require.Equal(t, 1, p.Refs(blk), "b still holds them")
	}
	p.Free(b)
	require.Equal(t, 4, p.Available())
	c := p.Add(seqTokens(16, 500), 0)
	g, err := p.Grow(c, c.Len())
	require.NoError(t, err, "the whole pool is free again")
	require.Empty(t, g.Preempted)
	_, err = p.Grow(a, 1)
	require.Error(t, err, "a freed sequence is gone")
}

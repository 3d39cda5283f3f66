package tokenizer

import "container/heap"

// symbol is one segment of a word during BPE merging, kept in a doubly
// linked list over a slice so that merges are O(1).
type symbol struct {
	start, end int   // byte range in the word
	id         int32 // token id, or -1 when the segment is not a token (yet)
	prev, next int   // neighbour indices, -1 at the ends
	ver        uint32
	dead       bool
}

// pairFunc reports whether the adjacent symbols l and r (over word) merge,
// with the merge's priority (lower merges first) and the merged token id.
// The three BPE flavours differ only here: Hugging Face ranks merges by
// their line in merges.txt, tiktoken by the merged token's rank, and
// SentencePiece by the merged piece's score.
type pairFunc func(word string, l, r *symbol) (prio float64, id int32, ok bool)

type candidate struct {
	prio       float64
	left       int
	right      int
	lver, rver uint32
	id         int32
}

type candidates []candidate

func (c candidates) Len() int { return len(c) }
func (c candidates) Less(i, j int) bool {
	if c[i].prio != c[j].prio {
		return c[i].prio < c[j].prio
	}
	return c[i].left < c[j].left // ties: leftmost first, as all three references do
}
func (c candidates) Swap(i, j int) { c[i], c[j] = c[j], c[i] }
func (c *candidates) Push(x any)   { *c = append(*c, x.(candidate)) }
func (c *candidates) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// mergeSymbols applies merges to syms (linked in slice order) until no
// adjacent pair merges, always taking the best-priority pair, leftmost on
// ties. Stale heap entries are recognised by symbol versions, which makes
// the whole word O(n log n).
func mergeSymbols(word string, syms []symbol, pair pairFunc) []symbol {
	if len(syms) < 2 {
		return syms
	}
	for i := range syms {
		syms[i].prev, syms[i].next = i-1, i+1
	}
	syms[len(syms)-1].next = -1
	h := make(candidates, 0, len(syms))
	push := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		if p, id, ok := pair(word, &syms[l], &syms[r]); ok {
			h = append(h, candidate{prio: p, left: l, right: r, lver: syms[l].ver, rver: syms[r].ver, id: id})
		}
	}
	for i := 0; i+1 < len(syms); i++ {
		push(i, i+1)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		c := heap.Pop(&h).(candidate)
		l, r := &syms[c.left], &syms[c.right]
		if l.dead || r.dead || l.next != c.right || l.ver != c.lver || r.ver != c.rver {
			continue
		}
		l.end = r.end
		l.id = c.id
		l.ver++
		l.next = r.next
		r.dead = true
		if r.next >= 0 {
			syms[r.next].prev = c.left
		}
		for _, e := range []int{l.prev, c.left} {
			if e >= 0 {
				n := syms[e].next
				if n >= 0 {
					if p, id, ok := pair(word, &syms[e], &syms[n]); ok {
						heap.Push(&h, candidate{prio: p, left: e, right: n, lver: syms[e].ver, rver: syms[n].ver, id: id})
					}
				}
			}
		}
	}
	out := syms[:0]
	for i := 0; i >= 0; {
		s := syms[i]
		out = append(out, s)
		i = s.next
	}
	return out
}

package tokenizer

// rankModel is tiktoken's byte-pair encoding: tokens are raw byte strings
// whose rank is their id, and the adjacent pair whose concatenation has the
// lowest rank merges first. Words are raw bytes, not byte-level runes.
type rankModel struct {
	vocab
	cache wordCache
}

func (m *rankModel) pair(word string, l, r *symbol) (float64, int32, bool) {
	id, ok := m.vocab.id(word[l.start:r.end])
	return float64(id), id, ok
}

func (m *rankModel) encodeWord(word string, dst []int32) []int32 {
	if id, ok := m.vocab.id(word); ok {
		return append(dst, id)
	}
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	syms := make([]symbol, len(word))
	for i := range syms {
		id, ok := m.vocab.id(word[i : i+1])
		if !ok {
			id = -1 // cannot happen with a complete byte table; dropped below
		}
		syms[i] = symbol{start: i, end: i + 1, id: id}
	}
	syms = mergeSymbols(word, syms, m.pair)
	start := len(dst)
	for _, s := range syms {
		if s.id >= 0 {
			dst = append(dst, s.id)
		}
	}
	m.cache.put(word, append([]int32(nil), dst[start:]...))
	return dst
}

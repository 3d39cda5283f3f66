package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// bpeModel is Hugging Face's BPE: merges ranked by their order in the
// merges list, optional byte fallback and unknown token.
type bpeModel struct {
	vocab
	merges       map[uint64]mergeRule
	byteFallback bool
	byteIDs      [256]int32 // <0xXX> ids when byteFallback, else -1
	unk          int32
	fuseUnk      bool
	ignoreMerges bool
	cache        wordCache
}

type mergeRule struct{ rank, id int32 }

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// newBPEModel builds the model; merges are pairs of token strings.
func newBPEModel(v vocab, merges [][2]string, unk string, byteFallback, fuseUnk, ignoreMerges bool) (*bpeModel, error) {
	m := &bpeModel{vocab: v, merges: make(map[uint64]mergeRule, len(merges)), byteFallback: byteFallback,
		unk: -1, fuseUnk: fuseUnk, ignoreMerges: ignoreMerges}
	for i, mg := range merges {
		a, okA := v.id(mg[0])
		b, okB := v.id(mg[1])
		c, okC := v.id(mg[0] + mg[1])
		if !okA || !okB || !okC {
			return nil, fmt.Errorf("tokenizer: merge %d (%q %q) uses a token missing from the vocabulary", i, mg[0], mg[1])
		}
		k := pairKey(a, b)
		if _, dup := m.merges[k]; !dup {
			m.merges[k] = mergeRule{rank: int32(i), id: c}
		}
	}
	if unk != "" {
		id, ok := v.id(unk)
		if !ok {
			return nil, fmt.Errorf("tokenizer: unknown token %q is not in the vocabulary", unk)
		}
		m.unk = id
	}
	for b := range m.byteIDs {
		m.byteIDs[b] = -1
		if byteFallback {
			if id, ok := v.id(fmt.Sprintf("<0x%02X>", b)); ok {
				m.byteIDs[b] = id
			}
		}
	}
	return m, nil
}

func (m *bpeModel) pair(_ string, l, r *symbol) (float64, int32, bool) {
	if l.id < 0 || r.id < 0 {
		return 0, 0, false
	}
	mr, ok := m.merges[pairKey(l.id, r.id)]
	return float64(mr.rank), mr.id, ok
}

func (m *bpeModel) encodeWord(word string, dst []int32) []int32 {
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	if m.ignoreMerges {
		if id, ok := m.vocab.id(word); ok {
			m.cache.put(word, []int32{id})
			return append(dst, id)
		}
	}
	syms := make([]symbol, 0, len(word))
	for i := 0; i < len(word); {
		_, n := utf8.DecodeRuneInString(word[i:])
		if id, ok := m.vocab.id(word[i : i+n]); ok {
			syms = append(syms, symbol{start: i, end: i + n, id: id})
		} else if m.byteFallback && m.allBytes(word[i:i+n]) {
			// One symbol per byte; no merges involve byte tokens.
			for j := i; j < i+n; j++ {
				syms = append(syms, symbol{start: j, end: j + 1, id: m.byteIDs[word[j]]})
			}
		} else if m.unk >= 0 {
			if m.fuseUnk && len(syms) > 0 && syms[len(syms)-1].id == m.unk {
				syms[len(syms)-1].end = i + n
			} else {
				syms = append(syms, symbol{start: i, end: i + n, id: m.unk})
			}
		}
		i += n
	}
	syms = mergeSymbols(word, syms, m.pair)
	start := len(dst)
	for _, s := range syms {
		dst = append(dst, s.id)
	}
	m.cache.put(word, append([]int32(nil), dst[start:]...))
	return dst
}

func (m *bpeModel) allBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if m.byteIDs[s[i]] < 0 {
			return false
		}
	}
	return true
}

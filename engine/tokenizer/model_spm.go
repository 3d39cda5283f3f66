package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// Piece types of SentencePiece (and of GGUF's tokenizer.ggml.token_type).
const (
	pieceNormal      = 1
	pieceUnknown     = 2
	pieceControl     = 3
	pieceUserDefined = 4
	pieceUnused      = 5
	pieceByte        = 6
)

// spmModel is SentencePiece's BPE: start from characters and repeatedly
// merge the adjacent pair whose concatenation is the highest-scoring
// piece. Characters that end up as no piece fall back to <0xXX> byte
// pieces, or to the unknown piece.
type spmModel struct {
	vocab
	scores       []float32
	types        []int32
	byteFallback bool
	byteIDs      [256]int32
	unk          int32
	cache        wordCache
}

func newSPMModel(v vocab, scores []float32, types []int32, unk int32, byteFallback bool) (*spmModel, error) {
	if len(scores) != len(v.tokens) || len(types) != len(v.tokens) {
		return nil, fmt.Errorf("tokenizer: %d pieces but %d scores and %d types", len(v.tokens), len(scores), len(types))
	}
	m := &spmModel{vocab: v, scores: scores, types: types, byteFallback: byteFallback, unk: unk}
	for b := range m.byteIDs {
		m.byteIDs[b] = -1
		if id, ok := v.id(fmt.Sprintf("<0x%02X>", b)); ok && types[id] == pieceByte {
			m.byteIDs[b] = id
		}
	}
	return m, nil
}

// mergeable reports whether a piece may result from a merge: control,
// unknown and byte pieces never come from text.
func (m *spmModel) mergeable(id int32) bool {
	t := m.types[id]
	return t == pieceNormal || t == pieceUserDefined || t == pieceUnused
}

func (m *spmModel) pair(word string, l, r *symbol) (float64, int32, bool) {
	id, ok := m.vocab.id(word[l.start:r.end])
	if !ok || !m.mergeable(id) {
		return 0, 0, false
	}
	return -float64(m.scores[id]), id, true
}

func (m *spmModel) encodeWord(word string, dst []int32) []int32 {
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	syms := make([]symbol, 0, len(word))
	for i := 0; i < len(word); {
		_, n := utf8.DecodeRuneInString(word[i:])
		id, ok := m.vocab.id(word[i : i+n])
		if !ok || !m.mergeable(id) {
			id = -1
		}
		syms = append(syms, symbol{start: i, end: i + n, id: id})
		i += n
	}
	syms = mergeSymbols(word, syms, m.pair)
	start := len(dst)
	for _, s := range syms {
		if s.id >= 0 {
			dst = append(dst, s.id)
			continue
		}
		piece := word[s.start:s.end]
		if m.byteFallback && m.allBytes(piece) {
			for j := 0; j < len(piece); j++ {
				dst = append(dst, m.byteIDs[piece[j]])
			}
		} else if m.unk >= 0 {
			// SentencePiece fuses runs of unknown characters into one <unk>.
			if len(dst) > start && dst[len(dst)-1] == m.unk {
				continue
			}
			dst = append(dst, m.unk)
		}
	}
	m.cache.put(word, append([]int32(nil), dst[start:]...))
	return dst
}

func (m *spmModel) allBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if m.byteIDs[s[i]] < 0 {
			return false
		}
	}
	return true
}

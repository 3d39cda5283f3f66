package tokenizer

import (
	"fmt"
	"sync"
)

// model turns one pre-tokenized word into token ids and knows the text of
// its tokens. The three BPE flavours below implement it.
type model interface {
	encodeWord(word string, dst []int32) []int32
	size() int
	token(id int32) (string, bool)
	id(tok string) (int32, bool)
}

// vocab is the id <-> token-text table shared by the models.
type vocab struct {
	tokens []string
	ids    map[string]int32
}

func newVocab(tokens []string) vocab {
	ids := make(map[string]int32, len(tokens))
	for i, t := range tokens {
		if _, dup := ids[t]; !dup {
			ids[t] = int32(i)
		}
	}
	return vocab{tokens: tokens, ids: ids}
}

// vocabFromMap builds the table from a token -> id map (vocab.json,
// tokenizer.json), rejecting ids that would need an unbounded slice.
func vocabFromMap(m map[string]int32) (vocab, error) {
	maxID := int32(-1)
	for _, id := range m {
		if id < 0 {
			return vocab{}, fmt.Errorf("tokenizer: negative token id %d", id)
		}
		maxID = max(maxID, id)
	}
	if int(maxID) >= 4*len(m)+1024 {
		return vocab{}, fmt.Errorf("tokenizer: token ids are too sparse (max id %d for %d tokens)", maxID, len(m))
	}
	tokens := make([]string, maxID+1)
	for t, id := range m {
		tokens[id] = t
	}
	return vocab{tokens: tokens, ids: m}, nil
}

func (v *vocab) size() int { return len(v.tokens) }
func (v *vocab) token(id int32) (string, bool) {
	if id < 0 || int(id) >= len(v.tokens) {
		return "", false
	}
	return v.tokens[id], true
}
func (v *vocab) id(tok string) (int32, bool) { id, ok := v.ids[tok]; return id, ok }

// wordCache memoises encodeWord: natural text repeats words constantly.
// It is bounded and simply cleared when full.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int32
}

const wordCacheMax = 1 << 16

func (c *wordCache) get(w string) ([]int32, bool) {
	c.mu.Lock()
	ids, ok := c.m[w]
	c.mu.Unlock()
	return ids, ok
}

func (c *wordCache) put(w string, ids []int32) {
	if len(w) > 256 {
		return // long words are rare and would bloat the cache
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= wordCacheMax {
		c.m = make(map[string][]int32)
	}
	c.m[w] = ids
	c.mu.Unlock()
}

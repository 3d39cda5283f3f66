package kvpage

import (
	"crypto/sha256"
	"encoding/binary"
)

// prefixKey names a full block by its tokens and everything before them:
// SHA-256 over the previous block's key and this block's token ids, so
// equal keys mean equal prefixes (and equal keys and values in the cache,
// the model and its settings being the pool's own).
type prefixKey [sha256.Size]byte

// keyOf is the key of the block holding tokens after the block keyed
// parent (nil: the first block).
func keyOf(parent *prefixKey, tokens []int32) prefixKey {
	h := sha256.New()
	if parent != nil {
		h.Write(parent[:])
	}
	var b [4]byte
	for _, t := range tokens {
		binary.LittleEndian.PutUint32(b[:], uint32(t))
		h.Write(b[:])
	}
	var k prefixKey
	h.Sum(k[:0])
	return k
}

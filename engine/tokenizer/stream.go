package tokenizer

import "unicode/utf8"

// StreamDecoder turns a stream of token ids into text as it is generated,
// emitting only complete UTF-8: a character split over several byte tokens
// is held back until its last byte arrives. Unlike Decode it does not
// apply clean_up_tokenization_spaces, which needs the following token.
type StreamDecoder struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte
	started     bool
}

// NewStreamDecoder starts a stream; skipSpecial drops special tokens.
func (t *Tokenizer) NewStreamDecoder(skipSpecial bool) *StreamDecoder {
	return &StreamDecoder{t: t, skipSpecial: skipSpecial}
}

// Add appends one token and returns the text it completes (maybe "").
func (d *StreamDecoder) Add(id int32) string {
	d.pending = d.t.appendToken(d.pending, id, d.skipSpecial)
	if !d.started && len(d.pending) > 0 {
		d.started = true
		d.pending = d.t.stripStart(d.pending)
	}
	n := completePrefix(d.pending)
	out := lossyUTF8(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return out
}

// Flush returns whatever is held back, invalid bytes as U+FFFD.
func (d *StreamDecoder) Flush() string {
	out := lossyUTF8(d.pending)
	d.pending = d.pending[:0]
	return out
}

// completePrefix returns the length of b without a trailing incomplete
// (but so far valid) UTF-8 sequence.
func completePrefix(b []byte) int {
	for back := 1; back <= utf8.UTFMax-1 && back <= len(b); back++ {
		i := len(b) - back
		need, _, _ := seqInfo(b[i])
		if need == 0 {
			if b[i] >= 0x80 && b[i] <= 0xBF {
				continue // continuation byte: look further back for the lead
			}
			return len(b)
		}
		if back <= need && invalidPrefixLen(b[i:]) == back {
			return i // a valid start still waiting for bytes
		}
		return len(b)
	}
	return len(b)
}

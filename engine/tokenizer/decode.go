package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// decodeMode says how a model token's text becomes bytes.
type decodeMode int

const (
	decodeByteLevel decodeMode = iota // GPT-2 byte-level runes
	decodeMetaspace                   // "▁" is a space, <0xXX> a byte
	decodeRaw                         // tiktoken: the token text is the bytes
)

// decoderSpec is the decoding pipeline reduced to what the supported
// tokenizers use.
type decoderSpec struct {
	mode         decodeMode
	byteFallback bool // <0xXX> tokens are bytes (metaspace mode)
	stripLeading int  // spaces removed from the start of the output (the dummy prefix)
	cleanup      bool // transformers' clean_up_tokenization_spaces
}

// appendToken appends the bytes of one token.
func (t *Tokenizer) appendToken(dst []byte, id int32, skipSpecial bool) []byte {
	if skipSpecial && t.special[id] {
		return dst
	}
	if a, ok := t.added[id]; ok {
		if t.dec.mode == decodeMetaspace {
			// added tokens go through the decoder too (Gemma's
			// whitespace runs "▁▁…" are added tokens)
			return append(dst, strings.ReplaceAll(a.Content, metaSpace, " ")...)
		}
		return append(dst, a.Content...)
	}
	tok, ok := t.model.token(id)
	if !ok {
		return dst
	}
	switch t.dec.mode {
	case decodeByteLevel:
		return byteLevelDecode(dst, tok)
	case decodeMetaspace:
		if t.dec.byteFallback {
			if b, ok := parseByteToken(tok); ok {
				return append(dst, b)
			}
		}
		return append(dst, strings.ReplaceAll(tok, metaSpace, " ")...)
	default:
		return append(dst, tok...)
	}
}

// parseByteToken recognises SentencePiece byte pieces "<0xXX>".
func parseByteToken(tok string) (byte, bool) {
	if len(tok) != 6 || tok[:3] != "<0x" || tok[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range []byte(tok[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			b = b<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			b = b<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			b = b<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return b, true
}

// TokenBytes is the bytes id stands for inside a text: unlike Decode of
// the one id, no leading space is stripped and no UTF-8 is repaired (a
// token may be a fragment of a character).
func (t *Tokenizer) TokenBytes(id int32) []byte { return t.appendToken(nil, id, false) }

// Decode turns ids back into text, special tokens included.
func (t *Tokenizer) Decode(ids []int32) string { return t.decode(ids, false) }

// DecodeSkipSpecial turns ids back into text without special tokens.
func (t *Tokenizer) DecodeSkipSpecial(ids []int32) string { return t.decode(ids, true) }

func (t *Tokenizer) decode(ids []int32, skipSpecial bool) string {
	var buf []byte
	for _, id := range ids {
		buf = t.appendToken(buf, id, skipSpecial)
	}
	buf = t.stripStart(buf)
	s := lossyUTF8(buf)
	if t.dec.cleanup {
		s = cleanupSpaces(s)
	}
	return s
}

func (t *Tokenizer) stripStart(b []byte) []byte {
	for n := t.dec.stripLeading; n > 0 && len(b) > 0 && b[0] == ' '; n-- {
		b = b[1:]
	}
	return b
}

// lossyUTF8 converts bytes to a string, replacing each maximal invalid
// subsequence by U+FFFD (Rust's String::from_utf8_lossy, which the
// Hugging Face decoders use).
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[:n])
			b = b[n:]
			continue
		}
		sb.WriteRune(utf8.RuneError)
		b = b[invalidPrefixLen(b):]
	}
	return sb.String()
}

// invalidPrefixLen is the length of the maximal prefix of b that could
// start a valid UTF-8 sequence (at least 1): the bytes one U+FFFD replaces.
func invalidPrefixLen(b []byte) int {
	need, lo, hi := seqInfo(b[0])
	if need == 0 {
		return 1
	}
	i := 1
	for ; i < len(b) && i <= need; i++ {
		c := b[i]
		l, h := byte(0x80), byte(0xBF)
		if i == 1 {
			l, h = lo, hi
		}
		if c < l || c > h {
			break
		}
	}
	return i
}

// seqInfo returns how many continuation bytes lead byte c needs and the
// allowed range of the first one (0 for bytes that cannot lead).
func seqInfo(c byte) (need int, lo, hi byte) {
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 1, 0x80, 0xBF
	case c == 0xE0:
		return 2, 0xA0, 0xBF
	case c == 0xED:
		return 2, 0x80, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		return 2, 0x80, 0xBF
	case c == 0xF0:
		return 3, 0x90, 0xBF
	case c == 0xF4:
		return 3, 0x80, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		return 3, 0x80, 0xBF
	}
	return 0, 0, 0
}

// cleanupSpaces is transformers' clean_up_tokenization: drop the space
// before punctuation and English contractions.
func cleanupSpaces(s string) string {
	return spaceCleaner.Replace(s)
}

var spaceCleaner = strings.NewReplacer(
	" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'",
	" n't", "n't", " 'm", "'m", " 's", "'s", " 've", "'ve", " 're", "'re",
)

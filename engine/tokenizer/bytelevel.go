package tokenizer

import "unicode/utf8"

// GPT-2's byte-level BPE works on text where every byte is replaced by a
// printable rune, so that vocabularies stored as JSON strings never contain
// whitespace or control characters. Printable Latin-1 bytes map to
// themselves; the remaining 68 bytes map to U+0100 onwards, in byte order.
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelEncode maps every byte of s to its byte-level rune.
func byteLevelEncode(s string) string {
	buf := make([]byte, 0, len(s)*2)
	for i := 0; i < len(s); i++ {
		buf = utf8.AppendRune(buf, byteToRune[s[i]])
	}
	return string(buf)
}

// byteLevelDecode maps a byte-level token back to its bytes. A token holding
// a rune outside the mapping (an added token's literal text, say) is taken
// verbatim, as Hugging Face's ByteLevel decoder does.
func byteLevelDecode(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return append(dst[:start], tok...)
		}
		dst = append(dst, b)
	}
	return dst
}

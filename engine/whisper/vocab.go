package whisper

import "fmt"

// Languages in the order of Whisper's language tokens (<|en|> first).
// large-v3 adds Cantonese as the 100th.
var Languages = []string{
	"en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi",
	"vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml",
	"cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs",
	"kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am",
	"yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln",
	"ha", "ba", "jw", "su", "yue",
}

// Specials are the ids of Whisper's special tokens, which depend only on
// the vocabulary size: 1501 timestamp tokens (<|0.00|> .. <|30.00|>) end
// the vocabulary, preceded by the task and control tokens, the language
// tokens and start-of-transcript.
type Specials struct {
	EOT, SOT, Translate, Transcribe, SOTLM, SOTPrev, NoSpeech, NoTimestamps, TimestampBegin int32
	NLanguages                                                                              int
}

// SpecialsFor derives the special-token ids from n_vocab.
func SpecialsFor(nVocab int) (Specials, error) {
	var s Specials
	switch {
	case nVocab == 51864: // English-only GPT-2 vocabulary
		s.EOT = 50256
	case nVocab == 51865 || nVocab == 51866:
		s.EOT = 50257
	default:
		return s, fmt.Errorf("whisper: unknown vocabulary size %d", nVocab)
	}
	s.SOT = s.EOT + 1
	s.TimestampBegin = int32(nVocab - 1501)
	s.NoTimestamps = s.TimestampBegin - 1
	s.NoSpeech = s.TimestampBegin - 2
	s.SOTPrev = s.TimestampBegin - 3
	s.SOTLM = s.TimestampBegin - 4
	s.Transcribe = s.TimestampBegin - 5
	s.Translate = s.TimestampBegin - 6
	s.NLanguages = int(s.Translate - s.SOT - 1)
	if s.NLanguages < 0 || s.NLanguages > len(Languages) {
		return s, fmt.Errorf("whisper: vocabulary size %d leaves %d language tokens", nVocab, s.NLanguages)
	}
	return s, nil
}

// LanguageToken returns the token of a language code.
func (s Specials) LanguageToken(code string) (int32, error) {
	for i, l := range Languages[:s.NLanguages] {
		if l == code {
			return s.SOT + 1 + int32(i), nil
		}
	}
	return 0, fmt.Errorf("whisper: unknown language %q", code)
}

// IsTimestamp reports whether t is a timestamp token.
func (s Specials) IsTimestamp(t int32) bool { return t >= s.TimestampBegin }

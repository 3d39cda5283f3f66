package whisper

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harkapp/hark/engine/tokenizer"
)

// Vocab maps token ids to their bytes: the regular tokens stored in the
// model file, and the special tokens named as the reference names them.
type Vocab struct {
	tokens [][]byte
	sp     Specials
	bpe    *tokenizer.Tokenizer // encodes prompts; ids equal GPT-2 ranks
}

// NewVocab builds the vocabulary from the file's regular tokens.
func NewVocab(regular []string, nVocab int) (*Vocab, error) {
	sp, err := SpecialsFor(nVocab)
	if err != nil {
		return nil, err
	}
	if len(regular) > int(sp.EOT) {
		regular = regular[:sp.EOT] // some converters store the specials too
	}
	if len(regular) != int(sp.EOT) {
		return nil, fmt.Errorf("whisper: the vocabulary has %d regular tokens, want %d", len(regular), sp.EOT)
	}
	bpe, err := tokenizer.NewGPT2Ranked(regular, nil)
	if err != nil {
		return nil, err
	}
	v := &Vocab{tokens: make([][]byte, nVocab), sp: sp, bpe: bpe}
	for i, s := range regular {
		v.tokens[i] = []byte(s)
	}
	name := func(id int32, s string) { v.tokens[id] = []byte(s) }
	name(sp.EOT, "<|endoftext|>")
	name(sp.SOT, "<|startoftranscript|>")
	for i := range sp.NLanguages {
		name(sp.SOT+1+int32(i), "<|"+Languages[i]+"|>")
	}
	name(sp.Translate, "<|translate|>")
	name(sp.Transcribe, "<|transcribe|>")
	name(sp.SOTLM, "<|startoflm|>")
	name(sp.SOTPrev, "<|startofprev|>")
	name(sp.NoSpeech, "<|nospeech|>")
	name(sp.NoTimestamps, "<|notimestamps|>")
	for i := int32(0); sp.TimestampBegin+i < int32(nVocab); i++ {
		name(sp.TimestampBegin+i, fmt.Sprintf("<|%.2f|>", float64(i)*0.02))
	}
	return v, nil
}

// Specials returns the special-token ids.
func (v *Vocab) Specials() Specials { return v.sp }

// TokenBytes returns a token's bytes (nil for an id out of range).
func (v *Vocab) TokenBytes(t int32) []byte {
	if t < 0 || int(t) >= len(v.tokens) {
		return nil
	}
	return v.tokens[t]
}

// Decode joins the text tokens (specials and timestamps are left out),
// replacing invalid UTF-8 as the reference does.
func (v *Vocab) Decode(tokens []int32) string {
	var b []byte
	for _, t := range tokens {
		if t >= 0 && t < v.sp.EOT {
			b = append(b, v.tokens[t]...)
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Encode tokenizes text (no special tokens are recognised).
func (v *Vocab) Encode(text string) []int32 { return v.bpe.EncodeWith(text, tokenizer.EncodeOptions{}) }

// SuppressBlank are the tokens not allowed as a window's first token: a
// blank and EOT.
func (v *Vocab) SuppressBlank() []int32 { return append(v.Encode(" "), v.sp.EOT) }

// DefaultSuppress is the reference's default suppression list: symbols
// that are not speech (brackets, music notes, speaker-turn dashes...) and
// the control tokens.
func (v *Vocab) DefaultSuppress() []int32 {
	var symbols []string
	for _, r := range "\"#()*+/:;<=>@[\\]^_`{|}~「」『』" {
		symbols = append(symbols, string(r))
	}
	symbols = append(symbols, strings.Fields(`<< >> <<< >>> -- --- -( -[ (' ("`+` (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪`)...)
	misc := []string{"♩", "♪", "♫", "♬", "♭", "♮", "♯"}
	set := map[int32]bool{}
	for _, s := range []string{" -", " '"} {
		if t := v.Encode(s); len(t) > 0 {
			set[t[0]] = true
		}
	}
	for i, s := range append(symbols, misc...) {
		isMisc := i >= len(symbols)
		for _, t := range [][]int32{v.Encode(s), v.Encode(" " + s)} {
			if len(t) == 1 || (isMisc && len(t) > 0) {
				set[t[0]] = true
			}
		}
	}
	sp := v.sp
	for _, t := range []int32{sp.Transcribe, sp.Translate, sp.SOT, sp.SOTPrev, sp.SOTLM, sp.NoSpeech} {
		set[t] = true
	}
	out := make([]int32, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Package tokenizer implements the tokenizers of the LLMs Hark runs:
// byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM2), SentencePiece BPE with
// byte fallback (Llama 2, TinyLlama, Phi-3) and tiktoken rank files, loaded
// from Hugging Face files, SentencePiece/tiktoken models or GGUF metadata.
// Encoding follows Hugging Face's pipeline: added tokens are cut out of the
// text first, then each remaining fragment is normalized, pre-tokenized and
// byte-pair encoded.
package tokenizer

// SpecialIDs are the ids of the tokenizer's special tokens, -1 when absent.
type SpecialIDs struct {
	BOS, EOS, EOT, PAD, UNK int32
}

// Tokenizer encodes text to token ids and back. It is safe for concurrent
// use.
type Tokenizer struct {
	model model
	norm  normalizer   // nil: none
	pre   preTokenizer // nil: each fragment is one word
	// raw tokens are matched in the input, normalized ones after normalization.
	raw, normalized *addedSet
	added           map[int32]AddedToken
	special         map[int32]bool // skipped by DecodeSkipSpecial
	dec             decoderSpec
	prefix, suffix  []int32 // what Encode(..., true) adds
	ids             SpecialIDs
	stops           []int32
}

// EncodeOptions control Encode.
type EncodeOptions struct {
	// AddSpecial adds BOS/EOS as the tokenizer's configuration says.
	AddSpecial bool
	// ParseSpecial matches special tokens written in the text (Hugging
	// Face's default). Non-special added tokens are matched regardless.
	ParseSpecial bool
}

// Encode tokenizes text. Special tokens written in the text are always
// recognised; addSpecial also adds BOS/EOS as configured.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	return t.EncodeWith(text, EncodeOptions{AddSpecial: addSpecial, ParseSpecial: true})
}

// EncodeWith tokenizes text with explicit options; ParseSpecial=false keeps
// untrusted text from smuggling control tokens into a prompt.
func (t *Tokenizer) EncodeWith(text string, o EncodeOptions) []int32 {
	ids := make([]int32, 0, len(text)/3+4)
	if o.AddSpecial {
		ids = append(ids, t.prefix...)
	}
	var frags, sub []fragment
	frags = t.raw.split(frags, text, true, o.ParseSpecial)
	for _, f := range frags {
		if f.id >= 0 {
			ids = append(ids, f.id)
			continue
		}
		s := f.text
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		sub = t.normalized.split(sub[:0], s, f.first, o.ParseSpecial)
		for _, g := range sub {
			if g.id >= 0 {
				ids = append(ids, g.id)
				continue
			}
			if t.pre == nil {
				if g.text != "" {
					ids = t.model.encodeWord(g.text, ids)
				}
				continue
			}
			for _, w := range t.pre.split([]string{g.text}, g.first) {
				if w != "" {
					ids = t.model.encodeWord(w, ids)
				}
			}
		}
	}
	if o.AddSpecial {
		ids = append(ids, t.suffix...)
	}
	return ids
}

// VocabSize is the number of token ids (model vocabulary and added tokens).
func (t *Tokenizer) VocabSize() int {
	n := t.model.size()
	for id := range t.added {
		n = max(n, int(id)+1)
	}
	return n
}

// Special returns the special token ids.
func (t *Tokenizer) Special() SpecialIDs { return t.ids }

// StopIDs are the tokens that end a generation: EOS, EOT and the other
// end-of-turn markers the vocabulary has.
func (t *Tokenizer) StopIDs() []int32 { return append([]int32(nil), t.stops...) }

// Token returns the vocabulary text of id (byte-level or "▁" form for
// model tokens, the literal content for added tokens).
func (t *Tokenizer) Token(id int32) (string, bool) {
	if a, ok := t.added[id]; ok {
		return a.Content, true
	}
	return t.model.token(id)
}

// TokenID returns the id of a token given its vocabulary text.
func (t *Tokenizer) TokenID(tok string) (int32, bool) {
	for id, a := range t.added {
		if a.Content == tok {
			return id, true
		}
	}
	return t.model.id(tok)
}

// IsSpecial reports whether id is a special (control) token.
func (t *Tokenizer) IsSpecial(id int32) bool { return t.special[id] }

// AddedTokens lists the tokens matched before BPE.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := make([]AddedToken, 0, len(t.added))
	for _, s := range []*addedSet{t.raw, t.normalized} {
		if s != nil {
			out = append(out, s.tokens...)
		}
	}
	return out
}

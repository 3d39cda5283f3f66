package tokenizer

import "fmt"

// NewGPT2Ranked builds a byte-level BPE over raw-byte tokens whose ids are
// their merge ranks (tiktoken's scheme), split with GPT-2's pattern, with
// specials following the regular tokens at the given ids. OpenAI's Whisper
// tokenizer is this: gpt2.tiktoken ranks (or multilingual.tiktoken) plus
// its special tokens; whisper.cpp files store the same raw-byte tokens.
func NewGPT2Ranked(tokens []string, specials map[int32]string) (*Tokenizer, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer: no tokens")
	}
	b := newBuilder()
	b.model = &rankModel{vocab: newVocab(tokens)}
	b.pre = &preSplit{re: reGPT2}
	b.dec = decoderSpec{mode: decodeRaw}
	for id, s := range specials {
		if int(id) < len(tokens) {
			return nil, fmt.Errorf("tokenizer: special %q has id %d inside the %d regular tokens", s, id, len(tokens))
		}
		b.added = append(b.added, AddedToken{ID: id, Content: s, Special: true})
	}
	return b.build(), nil
}

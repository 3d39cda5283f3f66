package tokenizer

import (
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Metadata is the read access to GGUF key/values the tokenizer needs;
// the GGUF reader implements it (through a small adapter).
type Metadata interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Int(key string) (int64, bool) // any integer type
	Bool(key string) (bool, bool)
	Float32s(key string) ([]float32, bool)
	Int32s(key string) ([]int32, bool) // any integer array type
}

// ggufPreTokenizers maps tokenizer.ggml.pre to the Hugging Face pipeline
// the model was converted from.
func ggufPreTokenizer(pre string) (preTokenizer, normalizer, bool, error) {
	switch pre {
	case "", "default", "gpt-2", "gpt2":
		return preByteLevel{re: reGPT2}, nil, false, nil
	case "llama-bpe", "llama3", "llama-v3":
		return preSequence{&preSplit{re: mustPattern(patternLlama3)}, preByteLevel{}}, nil, true, nil
	case "qwen2":
		return preSequence{&preSplit{re: mustPattern(patternQwen2)}, preByteLevel{}}, normUnicode{norm.NFC}, false, nil
	case "smollm":
		return preSequence{preDigits{individual: true}, preByteLevel{re: reGPT2}}, nil, false, nil
	}
	return nil, nil, false, fmt.Errorf("tokenizer: GGUF pre-tokenizer %q is not supported", pre)
}

// FromGGUF builds the tokenizer described by a GGUF file's tokenizer.ggml.*
// metadata.
func FromGGUF(md Metadata) (*Tokenizer, error) {
	kind, ok := md.String("tokenizer.ggml.model")
	if !ok {
		return nil, fmt.Errorf("tokenizer: GGUF has no tokenizer.ggml.model")
	}
	tokens, ok := md.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer: GGUF has no tokenizer.ggml.tokens")
	}
	types, ok := md.Int32s("tokenizer.ggml.token_type")
	if !ok {
		types = make([]int32, len(tokens))
		for i := range types {
			types[i] = pieceNormal
		}
	}
	if len(types) != len(tokens) {
		return nil, fmt.Errorf("tokenizer: GGUF has %d tokens but %d token types", len(tokens), len(types))
	}
	n := int64(len(tokens))
	optID := func(key string) int32 {
		if v, ok := md.Int(key); ok && v >= 0 && v < n {
			return int32(v)
		}
		return -1
	}
	flag := func(key string, def bool) bool {
		if v, ok := md.Bool(key); ok {
			return v
		}
		return def
	}
	b := newBuilder()
	b.ids = SpecialIDs{BOS: optID("tokenizer.ggml.bos_token_id"), EOS: optID("tokenizer.ggml.eos_token_id"),
		EOT: optID("tokenizer.ggml.eot_token_id"), PAD: optID("tokenizer.ggml.padding_token_id"),
		UNK: optID("tokenizer.ggml.unknown_token_id")}
	v := newVocab(tokens)
	var addBOS bool
	switch kind {
	case "llama":
		scores, ok := md.Float32s("tokenizer.ggml.scores")
		if !ok {
			return nil, fmt.Errorf("tokenizer: GGUF SentencePiece vocabulary has no tokenizer.ggml.scores")
		}
		m, err := newSPMModel(v, scores, types, b.ids.UNK, true)
		if err != nil {
			return nil, err
		}
		b.model = m
		prefix := flag("tokenizer.ggml.add_space_prefix", true)
		b.norm = normSPM{addDummyPrefix: prefix, escapeSpaces: true}
		b.dec = decoderSpec{mode: decodeMetaspace, byteFallback: true}
		if prefix {
			b.dec.stripLeading = 1
		}
		addBOS = flag("tokenizer.ggml.add_bos_token", true)
	case "gpt2":
		merges, ok := md.Strings("tokenizer.ggml.merges")
		if !ok {
			return nil, fmt.Errorf("tokenizer: GGUF BPE vocabulary has no tokenizer.ggml.merges")
		}
		pairs := make([][2]string, len(merges))
		for i, s := range merges {
			a, c, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("tokenizer: GGUF merge %d %q is not two tokens", i, s)
			}
			pairs[i] = [2]string{a, c}
		}
		preName, _ := md.String("tokenizer.ggml.pre")
		pre, nrm, ignoreMerges, err := ggufPreTokenizer(preName)
		if err != nil {
			return nil, err
		}
		m, err := newBPEModel(v, pairs, "", false, false, ignoreMerges)
		if err != nil {
			return nil, err
		}
		b.model, b.pre, b.norm = m, pre, nrm
		b.dec = decoderSpec{mode: decodeByteLevel}
		addBOS = flag("tokenizer.ggml.add_bos_token", false)
	default:
		return nil, fmt.Errorf("tokenizer: GGUF tokenizer model %q is not supported (want llama or gpt2)", kind)
	}
	// Control and user-defined tokens are matched in text, as Hugging Face
	// matches the added tokens they were converted from.
	for i, t := range types {
		switch t {
		case pieceControl, pieceUnknown:
			if tokens[i] != "" {
				b.added = append(b.added, AddedToken{ID: int32(i), Content: tokens[i], Special: true})
			}
		case pieceUserDefined:
			if tokens[i] != "" {
				b.added = append(b.added, AddedToken{ID: int32(i), Content: tokens[i]})
			}
		}
	}
	if addBOS && b.ids.BOS >= 0 {
		b.prefix = []int32{b.ids.BOS}
	}
	if flag("tokenizer.ggml.add_eos_token", false) && b.ids.EOS >= 0 {
		b.suffix = []int32{b.ids.EOS}
	}
	return b.build(), nil
}

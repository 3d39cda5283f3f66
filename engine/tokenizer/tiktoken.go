package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
)

// looksLikeTiktoken reports whether data starts with a "base64 rank" line
// (a SentencePiece model is binary protobuf).
func looksLikeTiktoken(data []byte) bool {
	line, _, _ := bytes.Cut(data[:min(len(data), 512)], []byte("\n"))
	tok, rank, ok := bytes.Cut(bytes.TrimRight(line, "\r"), []byte(" "))
	if !ok || len(tok) == 0 {
		return false
	}
	if _, err := base64.StdEncoding.DecodeString(string(tok)); err != nil {
		return false
	}
	_, err := strconv.Atoi(string(rank))
	return err == nil
}

// llama3Specials are the 256 special tokens Meta's Llama 3 tokenizer puts
// after the ranks (the names of Llama 3.0; 3.1 renamed some reserved ones).
func llama3Specials() []string {
	s := []string{"<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
		"<|reserved_special_token_1|>", "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
		"<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"}
	for i := 5; len(s) < 256; i++ {
		s = append(s, fmt.Sprintf("<|reserved_special_token_%d|>", i))
	}
	return s
}

// parseTiktoken builds a tokenizer from a tiktoken rank file such as Llama
// 3's tokenizer.model, with Meta's split pattern and special tokens.
func parseTiktoken(data []byte, cfg *hfConfig) (*Tokenizer, error) {
	var tokens []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		s := bytes.TrimRight(sc.Bytes(), "\r")
		if len(s) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(s, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d is not \"base64 rank\"", line)
		}
		raw, err := base64.StdEncoding.DecodeString(string(tok))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: %w", line, err)
		}
		r, err := strconv.Atoi(string(rank))
		if err != nil || r != len(tokens) {
			return nil, fmt.Errorf("tokenizer: tiktoken line %d: rank %q, want %d (ranks must be consecutive)", line, rank, len(tokens))
		}
		tokens = append(tokens, string(raw))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: tiktoken: %w", err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer: tiktoken file has no ranks")
	}
	b := newBuilder()
	b.model = &rankModel{vocab: newVocab(tokens)}
	b.pre = &preSplit{re: mustPattern(patternLlama3)}
	b.dec = decoderSpec{mode: decodeRaw}
	for i, s := range llama3Specials() {
		b.added = append(b.added, AddedToken{ID: int32(len(tokens) + i), Content: s, Special: true})
	}
	b.ids.BOS = int32(len(tokens))
	b.prefix = []int32{b.ids.BOS}
	if err := b.applyConfig(cfg); err != nil {
		return nil, err
	}
	return b.build(), nil
}

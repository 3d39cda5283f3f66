package parity

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/engine/gguf"
)

// SentencePiece piece types, as GGUF's tokenizer.ggml.token_type holds
// them.
const (
	pieceNormal      = 1
	pieceUnknown     = 2
	pieceControl     = 3
	pieceUserDefined = 4
	pieceByte        = 6
)

// Gemma3Vocab returns the tokenizer metadata of a Gemma 3 GGUF file as
// llama.cpp writes it (a SentencePiece vocabulary: tokenizer.ggml.model
// "llama", pieces with scores and types, no dummy prefix), derived from
// the Hugging Face tokenizer.json(.gz) and tokenizer_config.json(.gz) in
// dir. The Hugging Face BPE was converted from SentencePiece with its
// merges ordered by the merged piece's score, so a piece's score here is
// minus the rank of the first merge making it; added tokens are control
// (special) or user-defined pieces.
func Gemma3Vocab(dir string) (map[string]gguf.Value, error) {
	var tj struct {
		Model struct {
			Vocab  map[string]int32 `json:"vocab"`
			Merges [][2]string      `json:"merges"`
		} `json:"model"`
		Added []struct {
			ID      int32  `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
	}
	if err := readJSON(dir, "tokenizer.json", &tj); err != nil {
		return nil, err
	}
	var cfg struct {
		Template string `json:"chat_template"`
	}
	if err := readJSON(dir, "tokenizer_config.json", &cfg); err != nil {
		return nil, err
	}
	n := len(tj.Model.Vocab)
	tokens := make([]string, n)
	for s, id := range tj.Model.Vocab {
		if id < 0 || int(id) >= n {
			return nil, fmt.Errorf("parity: token id %d outside the vocabulary of %d", id, n)
		}
		tokens[id] = s
	}
	scores := make([]float32, n)
	scored := make([]bool, n)
	for rank, m := range tj.Model.Merges {
		if id, ok := tj.Model.Vocab[m[0]+m[1]]; ok && !scored[id] {
			scores[id], scored[id] = -float32(rank), true
		}
	}
	types := make([]int32, n)
	for i, s := range tokens {
		types[i] = pieceNormal
		if len(s) == 6 && s[:3] == "<0x" && s[5] == '>' {
			types[i] = pieceByte
		}
	}
	for _, a := range tj.Added {
		if int(a.ID) >= n {
			continue // <image_soft_token>, past the text vocabulary
		}
		types[a.ID] = pieceUserDefined
		if a.Special {
			types[a.ID] = pieceControl
		}
	}
	types[tj.Model.Vocab["<unk>"]] = pieceUnknown
	id := func(s string) gguf.Value { return gguf.Uint32(uint32(tj.Model.Vocab[s])) }
	return map[string]gguf.Value{
		"tokenizer.ggml.model":            gguf.String("llama"),
		"tokenizer.ggml.pre":              gguf.String("default"),
		"tokenizer.ggml.tokens":           gguf.ArrayValue(gguf.NewArray(tokens)),
		"tokenizer.ggml.scores":           gguf.ArrayValue(gguf.NewArray(scores)),
		"tokenizer.ggml.token_type":       gguf.ArrayValue(gguf.NewArray(types)),
		"tokenizer.ggml.bos_token_id":     id("<bos>"),
		"tokenizer.ggml.eos_token_id":     id("<eos>"),
		"tokenizer.ggml.unknown_token_id": id("<unk>"),
		"tokenizer.ggml.padding_token_id": id("<pad>"),
		"tokenizer.ggml.eot_token_id":     id("<end_of_turn>"),
		"tokenizer.ggml.add_bos_token":    gguf.Bool(true),
		"tokenizer.ggml.add_eos_token":    gguf.Bool(false),
		"tokenizer.ggml.add_space_prefix": gguf.Bool(false),
		"tokenizer.chat_template":         gguf.String(cfg.Template),
	}, nil
}

// readJSON reads dir/name, or its gzipped copy name.gz.
func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		if b, err = os.ReadFile(filepath.Join(dir, name+".gz")); err == nil {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
				b, err = io.ReadAll(zr)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("parity: %s: %w", name, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parity: %s: %w", name, err)
	}
	return nil
}

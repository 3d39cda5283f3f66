package tokenizer

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what a loader reads (the largest real tokenizer.json
// files are ~20 MB).
const maxFileSize = 256 << 20

// Load reads a tokenizer from path: a tokenizer.json (or .json.gz), a
// vocab.json with merges.txt beside it, a tokenizer.model (SentencePiece
// protobuf or tiktoken ranks), or a directory holding them, where
// tokenizer.json wins. A tokenizer_config.json in the same directory is
// applied when present.
func Load(path string) (*Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	dir, file := path, ""
	if !st.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	cfg, err := readConfig(filepath.Join(dir, "tokenizer_config.json"))
	if errors.Is(err, fs.ErrNotExist) {
		cfg, err = readConfig(filepath.Join(dir, "tokenizer_config.json.gz"))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if file == "" {
		for _, name := range []string{"tokenizer.json", "tokenizer.json.gz", "vocab.json", "tokenizer.model"} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				file = p
				break
			}
		}
		if file == "" {
			return nil, fmt.Errorf("tokenizer: %s holds no tokenizer.json, vocab.json or tokenizer.model", dir)
		}
	}
	data, err := readMaybeGzip(file)
	if err != nil {
		return nil, err
	}
	base := strings.ToLower(filepath.Base(file))
	switch {
	case base == "vocab.json":
		merges, err := readMaybeGzip(filepath.Join(dir, "merges.txt"))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: vocab.json needs merges.txt beside it: %w", err)
		}
		return parseVocabMerges(data, merges, cfg)
	case strings.HasSuffix(base, ".json"), strings.HasSuffix(base, ".json.gz"):
		return parseHFJSON(data, cfg)
	case strings.HasSuffix(base, ".gguf"):
		return nil, fmt.Errorf("tokenizer: %s is a GGUF model; load it with the GGUF reader", file)
	default:
		if looksLikeTiktoken(data) {
			return parseTiktoken(data, cfg)
		}
		return parseSentencePiece(data, cfg)
	}
}

// readMaybeGzip reads a file, gunzipping it when it is gzip-compressed,
// never reading more than maxFileSize bytes.
func readMaybeGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("tokenizer: %s is larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}

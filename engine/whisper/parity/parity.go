// Package parity defines the synthetic Whisper models whose outputs are
// checked against Hugging Face transformers (tools/parity/whisper_hf.py
// computes the references on a machine with PyTorch; the Go test
// regenerates the same models from their seeds).
package parity

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
)

// Config is one synthetic model.
type Config struct {
	Name string
	Seed uint64
	H    whisper.HParams
}

// Configs cover what the kit model does not: a multilingual vocabulary,
// large-v3's 128 mel bins and 51866 tokens, and turbo's decoder that is
// shallower than its encoder. Head size is 64 as in every real Whisper.
var Configs = []Config{
	{"multilingual", 101, whisper.HParams{NVocab: 51865, NAudioCtx: 1500, NAudioState: 384, NAudioHead: 6, NAudioLayer: 2,
		NTextCtx: 448, NTextState: 384, NTextHead: 6, NTextLayer: 2, NMels: 80}},
	{"large-v3", 202, whisper.HParams{NVocab: 51866, NAudioCtx: 1500, NAudioState: 384, NAudioHead: 6, NAudioLayer: 2,
		NTextCtx: 448, NTextState: 384, NTextHead: 6, NTextLayer: 2, NMels: 128}},
	{"turbo", 303, whisper.HParams{NVocab: 51866, NAudioCtx: 1500, NAudioState: 384, NAudioHead: 6, NAudioLayer: 4,
		NTextCtx: 448, NTextState: 384, NTextHead: 6, NTextLayer: 1, NMels: 128}},
}

// Write writes config c's model to path, with the tokenizer and mel filter
// assets of the whisper kit (dir = whisper-kit/assets).
func Write(c Config, assets, path string) error {
	vocab, err := readTiktoken(filepath.Join(assets, "multilingual.tiktoken"))
	if err != nil {
		return err
	}
	filters, err := mel.LoadMelFilters(filepath.Join(assets, "mel_filters.npz"), c.H.NMels)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	spec := whisper.RandomSpec{H: c.H, Seed: c.Seed, Vocab: vocab, Mel: filters.Data, Weight: ggml.F16}
	if err := whisper.WriteRandom(f, spec); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readTiktoken reads "base64 rank" lines into tokens ordered by rank.
func readTiktoken(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var toks []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		b64, rank, ok := strings.Cut(sc.Text(), " ")
		if !ok || rank != fmt.Sprint(len(toks)) {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		// Python's b64decode accepts "=" (rank 50256 of multilingual.tiktoken)
		// as the empty string; decode without padding to match.
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, len(toks)+1, err)
		}
		toks = append(toks, string(raw))
	}
	return toks, sc.Err()
}

package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// parseVocabMerges builds a byte-level BPE tokenizer from GPT-2 style
// vocab.json and merges.txt. Those files do not say how to pre-tokenize;
// like transformers' slow tokenizers, the class named in
// tokenizer_config.json decides (Qwen2Tokenizer: NFC and Qwen's pattern;
// anything else: GPT-2's).
func parseVocabMerges(vocabJSON, mergesTxt []byte, cfg *hfConfig) (*Tokenizer, error) {
	var vm map[string]int32
	if err := json.Unmarshal(vocabJSON, &vm); err != nil {
		return nil, fmt.Errorf("tokenizer: vocab.json: %w", err)
	}
	v, err := vocabFromMap(vm)
	if err != nil {
		return nil, err
	}
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(mergesTxt))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimRight(sc.Text(), "\r")
		if s == "" || (line == 1 && strings.HasPrefix(s, "#version")) {
			continue
		}
		a, c, ok := strings.Cut(s, " ")
		if !ok || strings.Contains(c, " ") {
			return nil, fmt.Errorf("tokenizer: merges.txt line %d %q is not two tokens", line, s)
		}
		merges = append(merges, [2]string{a, c})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: merges.txt: %w", err)
	}
	m, err := newBPEModel(v, merges, "", false, false, false)
	if err != nil {
		return nil, err
	}
	b := newBuilder()
	b.model = m
	b.dec = decoderSpec{mode: decodeByteLevel}
	b.pre = preByteLevel{re: reGPT2}
	if cfg != nil && strings.HasPrefix(cfg.TokenizerClass, "Qwen2Tokenizer") {
		b.norm = normUnicode{norm.NFC}
		b.pre = preSequence{&preSplit{re: mustPattern(patternQwen2)}, preByteLevel{}}
	}
	if err := b.applyConfig(cfg); err != nil {
		return nil, err
	}
	return b.build(), nil
}

package tokenizer

import (
	"fmt"

	"github.com/dlclark/regexp2"
)

// Pre-tokenizer split patterns. They need lookahead ("\s+(?!\S)"), which
// Go's regexp lacks; regexp2 implements it with the same Unicode classes
// as Oniguruma, which Hugging Face uses (\s = White_Space, \p{N} = all
// numerics).
const (
	patternGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

func compilePattern(p string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(p, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: split pattern %q: %w", p, err)
	}
	return re, nil
}

func mustPattern(p string) *regexp2.Regexp {
	re, err := compilePattern(p)
	if err != nil {
		panic(err) // only for the constants above
	}
	return re
}

var reGPT2 = mustPattern(patternGPT2)

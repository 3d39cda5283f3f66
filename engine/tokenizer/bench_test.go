package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// benchText is the llm-kit test strings repeated to ~64 KB: prose, code,
// CJK, emoji and whitespace runs.
func benchText(b *testing.B) string {
	data, err := os.ReadFile(shared.Path(b, "llm-kit", "references", "tokenize", "strings.json"))
	require.NoError(b, err)
	var strs []string
	require.NoError(b, json.Unmarshal(data, &strs))
	one := strings.Join(strs, "\n")
	return strings.Repeat(one, 64<<10/len(one)+1)
}

// BenchmarkEncode measures throughput on long text. "cold" clears the word
// cache every iteration, so it measures the BPE merging itself.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, tc := range []struct {
		name string
		path []string
	}{
		{"llama3-json", []string{"llama3"}},
		{"llama3-tiktoken", []string{"llama3", "tokenizer.model"}},
		{"qwen2.5", []string{"qwen2.5"}},
		{"smollm2", []string{"smollm2"}},
		{"llama2-spm", []string{"llama2", "tokenizer.model"}},
	} {
		tk := loadKit(b, tc.path...)
		for _, cold := range []bool{false, true} {
			name := tc.name
			if cold {
				name += "/cold"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				n := 0
				for b.Loop() {
					if cold {
						clearCache(tk.model)
					}
					n = len(tk.Encode(text, false))
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkEncodeLongWord: one 64 KB word without spaces is the worst case
// for merging (no pre-tokenizer splits it).
func BenchmarkEncodeLongWord(b *testing.B) {
	tk := loadKit(b, "llama2", "tokenizer.model")
	text := strings.Repeat("abcdefghij", 6554)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tk.Encode(text, false)
	}
}

func clearCache(m model) {
	switch m := m.(type) {
	case *bpeModel:
		m.cache = wordCache{}
	case *rankModel:
		m.cache = wordCache{}
	case *spmModel:
		m.cache = wordCache{}
	}
}

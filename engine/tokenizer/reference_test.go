package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

type tokrefCase struct {
	ID                 int     `json:"id"`
	Text               string  `json:"text"`
	IDs                []int32 `json:"ids"`
	IDsWithSpecial     []int32 `json:"ids_with_special"`
	Decoded            string  `json:"decoded"`
	DecodedSkipSpecial *string `json:"decoded_skip_special"`
}

func loadTokref(t *testing.T, name string) []tokrefCase {
	t.Helper()
	data, err := os.ReadFile(tokrefPath(t, name))
	require.NoError(t, err)
	var f struct {
		Cases []tokrefCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	require.Len(t, f.Cases, 45, "%s: reference case count", name)
	return f.Cases
}

// tokrefPath is the reference of tokenizer name: llm-kit/references, or,
// for Gemma 3, the transformers references of testdata/gemma3 (made by
// tools/parity/gemma3_hf.py).
func tokrefPath(t *testing.T, name string) string {
	if name == "gemma3" {
		return filepath.Join(shared.Fixture(t, "gemma3"), "gemma3.tokref.json")
	}
	return shared.Path(t, "llm-kit", "references", "tokenize", name+".tokref.json")
}

// TestReferenceTokenizations checks every llm-kit reference exactly:
// ids, ids with special tokens, decode and decode without specials, plus
// the streaming decoder against Decode.
func TestReferenceTokenizations(t *testing.T) {
	tok := func(elem ...string) string {
		return shared.Path(t, append([]string{"llm-kit", "tokenizers"}, elem...)...)
	}
	for _, tc := range []struct{ name, ref, path string }{
		{"smollm2", "smollm2", tok("smollm2")},
		{"smollm2/tokenizer.json", "smollm2", tok("smollm2", "tokenizer.json")},
		{"qwen2.5", "qwen2.5", tok("qwen2.5")},
		{"qwen2.5/vocab.json", "qwen2.5", tok("qwen2.5", "vocab.json")},
		{"qwen3", "qwen3", tok("qwen3")},
		{"llama3", "llama3", tok("llama3")},
		{"llama3/tokenizer.model", "llama3", tok("llama3", "tokenizer.model")},
		{"phi3-mini", "phi3-mini", tok("phi3-mini")},
		{"llama2/tokenizer.model", "llama2", tok("llama2", "tokenizer.model")},
		{"gemma3", "gemma3", tok("gemma3")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk, err := Load(tc.path)
			require.NoError(t, err)
			cases := loadTokref(t, tc.ref)
			pass := 0
			for _, c := range cases {
				ok := true
				check := func(what string, want, got any) {
					if !assertEqual(want, got) {
						ok = false
						t.Errorf("case %d %q %s:\nwant %v\n got %v", c.ID, c.Text, what, want, got)
					}
				}
				check("ids", nonNil(c.IDs), nonNil(tk.Encode(c.Text, false)))
				check("ids_with_special", nonNil(c.IDsWithSpecial), nonNil(tk.Encode(c.Text, true)))
				check("decoded", c.Decoded, tk.Decode(c.IDs))
				if c.DecodedSkipSpecial != nil {
					check("decoded_skip_special", *c.DecodedSkipSpecial, tk.DecodeSkipSpecial(c.IDs))
				}
				if !tk.dec.cleanup {
					check("stream", c.Decoded, streamAll(tk, c.IDs))
				}
				if ok {
					pass++
				}
			}
			t.Logf("%s: %d/%d reference cases pass", tc.name, pass, len(cases))
		})
	}
}

func streamAll(tk *Tokenizer, ids []int32) string {
	var sb strings.Builder
	d := tk.NewStreamDecoder(false)
	for _, id := range ids {
		sb.WriteString(d.Add(id))
	}
	sb.WriteString(d.Flush())
	return sb.String()
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

func assertEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

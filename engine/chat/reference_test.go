package chat

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// configFile is dir's tokenizer_config.json, gunzipped into a temp
// dir where llm-kit keeps it compressed (Gemma 3's is 1.1 MB).
func configFile(t *testing.T, dir string) string {
	p := filepath.Join(dir, "tokenizer_config.json")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	f, err := os.Open(p + ".gz")
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	p = filepath.Join(t.TempDir(), "tokenizer_config.json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

type chatRef struct {
	Template            string         `json:"template"`
	TemplateFile        *string        `json:"template_file"`
	Conversation        string         `json:"conversation"`
	AddGenerationPrompt bool           `json:"add_generation_prompt"`
	Kwargs              map[string]any `json:"kwargs"`
	Messages            []Message      `json:"messages"`
	Rendered            string         `json:"rendered"`
	IDs                 []int32        `json:"ids"`
}

// TestReferenceRenderings renders every chat case of the llm-kit
// references (transformers.js apply_chat_template) and tokenizes the
// result: both the text and the ids must match exactly.
func TestReferenceRenderings(t *testing.T) {
	kinds := map[string]string{"smollm2": "smollm2", "qwen2.5": "qwen2.5", "qwen3": "qwen3", "llama3": "llama3", "phi3-mini": "phi3-mini", "gemma3": "gemma3"}
	total := 0
	for ref, dir := range kinds {
		t.Run(ref, func(t *testing.T) {
			refPath := shared.Path
			if ref == "gemma3" {
				// transformers references of tools/parity/gemma3_hf.py
				refPath = func(t testing.TB, elem ...string) string {
					return filepath.Join(shared.Fixture(t, "gemma3"), ref+".tokref.json")
				}
			}
			b, err := os.ReadFile(refPath(t, "llm-kit", "references", "tokenize", ref+".tokref.json"))
			require.NoError(t, err)
			var doc struct {
				Chat []chatRef `json:"chat"`
			}
			require.NoError(t, json.Unmarshal(b, &doc))
			require.NotEmpty(t, doc.Chat)
			tkDir := shared.Path(t, "llm-kit", "tokenizers", dir)
			tk, err := tokenizer.Load(tkDir)
			require.NoError(t, err)
			cfg, err := FromTokenizerConfig(configFile(t, tkDir))
			require.NoError(t, err)
			require.NotNil(t, cfg)
			for i, c := range doc.Chat {
				tpl := cfg
				if c.TemplateFile != nil {
					src, err := os.ReadFile(filepath.Join(tkDir, *c.TemplateFile))
					require.NoError(t, err)
					tpl, err = New(*c.TemplateFile, string(src), cfg.Special())
					require.NoError(t, err)
				}
				got, err := tpl.Render(c.Messages, Options{AddGenerationPrompt: c.AddGenerationPrompt, Vars: c.Kwargs})
				require.NoError(t, err, "case %d (%s %s gen=%v)", i, c.Template, c.Conversation, c.AddGenerationPrompt)
				require.Equal(t, c.Rendered, got, "case %d (%s %s gen=%v)", i, c.Template, c.Conversation, c.AddGenerationPrompt)
				require.Equal(t, c.IDs, tk.Encode(got, false), "case %d ids", i)
				total++
			}
		})
	}
	t.Logf("%d renderings checked", total)
}

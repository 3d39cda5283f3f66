package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

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
	kinds := map[string]string{"smollm2": "smollm2", "qwen2.5": "qwen2.5", "qwen3": "qwen3", "llama3": "llama3", "phi3-mini": "phi3-mini"}
	total := 0
	for ref, dir := range kinds {
		t.Run(ref, func(t *testing.T) {
			b, err := os.ReadFile(shared.Path(t, "llm-kit", "references", "tokenize", ref+".tokref.json"))
			require.NoError(t, err)
			var doc struct {
				Chat []chatRef `json:"chat"`
			}
			require.NoError(t, json.Unmarshal(b, &doc))
			require.NotEmpty(t, doc.Chat)
			tkDir := shared.Path(t, "llm-kit", "tokenizers", dir)
			tk, err := tokenizer.Load(tkDir)
			require.NoError(t, err)
			cfg, err := FromTokenizerConfig(filepath.Join(tkDir, "tokenizer_config.json"))
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

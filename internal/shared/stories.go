package shared

import (
	"encoding/json"
	"os"
	"testing"
)

// StoriesGolden is llm-kit/golden/stories260K.golden.json: llama.cpp's
// tokenizations, greedy generations and logits for the stories260K model.
type StoriesGolden struct {
	Model struct {
		NVocab int `json:"n_vocab"`
	} `json:"model"`
	TokenizeCases []struct {
		ID      int     `json:"id"`
		Text    string  `json:"text"`
		IDs     []int32 `json:"ids"`
		Parsed  []int32 `json:"ids_special_tokens_parsed"`
		Decoded string  `json:"decoded"`
	} `json:"tokenize_cases"`
	Results []struct {
		Prompt          string  `json:"prompt"`
		PromptTokens    []int32 `json:"prompt_tokens"`
		GeneratedTokens []int32 `json:"generated_tokens"`
		GeneratedText   string  `json:"generated_text"`
		// Logits: rows of n_vocab float32 in stories260K.logits_f32.bin.
		Logits struct {
			Offset int `json:"offset_bytes"`
			Rows   int `json:"rows"`
			Cols   int `json:"cols"`
		} `json:"logits"`
	} `json:"results"`
}

// LoadStoriesGolden reads the stories260K golden file; the test fails when
// it is missing or has no results.
func LoadStoriesGolden(t testing.TB) *StoriesGolden {
	t.Helper()
	b, err := os.ReadFile(Path(t, "llm-kit", "golden", "stories260K.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g StoriesGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("stories260K.golden.json: %v", err)
	}
	if len(g.Results) == 0 {
		t.Fatal("stories260K.golden.json: no results")
	}
	return &g
}

package chat

import (
	"encoding/json"
	"fmt"
	"os"
)

// tokenizerConfig is the part of tokenizer_config.json a chat needs.
type tokenizerConfig struct {
	ChatTemplate json.RawMessage `json:"chat_template"`
	BOS          tokenText       `json:"bos_token"`
	EOS          tokenText       `json:"eos_token"`
}

// tokenText is a special-token field: a string, an AddedToken object
// ({"content": ...}) or null.
type tokenText string

func (t *tokenText) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*t = tokenText(*s)
		}
		return nil
	}
	var o struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("special token: %w", err)
	}
	*t = tokenText(o.Content)
	return nil
}

// FromTokenizerConfig reads the chat template and the BOS/EOS texts of a
// Hugging Face tokenizer_config.json. Its chat_template is a string, or a
// list of named templates of which "default" is used. It returns
// (nil, nil) when the file has no template.
func FromTokenizerConfig(path string) (*Template, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	if st.Size() > 64<<20 {
		return nil, fmt.Errorf("chat: %s is %d bytes, too large for a tokenizer config", path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	var c tokenizerConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("chat: %s: %w", path, err)
	}
	src, err := c.template()
	if err != nil {
		return nil, fmt.Errorf("chat: %s: %w", path, err)
	}
	if src == "" {
		return nil, nil
	}
	return New("tokenizer_config", src, SpecialTokens{BOS: string(c.BOS), EOS: string(c.EOS)})
}

func (c *tokenizerConfig) template() (string, error) {
	if len(c.ChatTemplate) == 0 || string(c.ChatTemplate) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(c.ChatTemplate, &s); err == nil {
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(c.ChatTemplate, &named); err != nil {
		return "", fmt.Errorf("chat_template is neither a string nor a list of named templates")
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("chat_template lists no \"default\" template")
}

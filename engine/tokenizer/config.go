package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// hfConfig is the part of tokenizer_config.json that affects tokenization.
type hfConfig struct {
	AddBOS         *bool                      `json:"add_bos_token"`
	AddEOS         *bool                      `json:"add_eos_token"`
	BOS            tokenName                  `json:"bos_token"`
	EOS            tokenName                  `json:"eos_token"`
	PAD            tokenName                  `json:"pad_token"`
	UNK            tokenName                  `json:"unk_token"`
	Cleanup        *bool                      `json:"clean_up_tokenization_spaces"`
	TokenizerClass string                     `json:"tokenizer_class"`
	AddedDecoder   map[string]hfAddedTokenDef `json:"added_tokens_decoder"`
}

// tokenName is a special-token field: a string, an AddedToken object or null.
type tokenName string

func (n *tokenName) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = tokenName(s)
		return nil
	}
	var o struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("special token: %w", err)
	}
	*n = tokenName(o.Content)
	return nil
}

type hfAddedTokenDef struct {
	ID         *int32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

func (d hfAddedTokenDef) token(id int32) AddedToken {
	return AddedToken{ID: id, Content: d.Content, Special: d.Special, LStrip: d.LStrip, RStrip: d.RStrip,
		SingleWord: d.SingleWord, Normalized: d.Normalized}
}

func readConfig(path string) (*hfConfig, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	b, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var c hfConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return &c, nil
}

// addedTokens returns the config's added_tokens_decoder entries.
func (c *hfConfig) addedTokens() ([]AddedToken, error) {
	var out []AddedToken
	for k, d := range c.AddedDecoder {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("tokenizer: added_tokens_decoder key %q is not a token id", k)
		}
		out = append(out, d.token(int32(id)))
	}
	return out, nil
}

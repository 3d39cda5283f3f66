package chat

import (
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/tokenizer"
)

// GGUFKey is the metadata key of a GGUF file's chat template.
const GGUFKey = "tokenizer.chat_template"

// ForModel returns the chat template of a GGUF model: its
// tokenizer.chat_template, or the built-in fallback for its vocabulary.
// bos_token and eos_token are the texts of tk's BOS and EOS tokens.
func ForModel(f *gguf.File, tk *tokenizer.Tokenizer) (*Template, error) {
	special := specialOf(tk)
	if v, ok := f.Get(GGUFKey); ok {
		if src, ok := v.String(); ok && src != "" {
			return New("gguf", src, special)
		}
	}
	return Fallback(special, func(s string) bool { _, ok := tk.TokenID(s); return ok }), nil
}

// CheckModel reports whether the chat template a GGUF model carries (if
// any) parses, as loading the model will check it: `hark models import` and
// `hark inspect` report a bad one before anyone chats with the model.
func CheckModel(f *gguf.File) error {
	if v, ok := f.Get(GGUFKey); ok {
		if src, ok := v.String(); ok && src != "" {
			return Check("gguf", src)
		}
	}
	return nil
}

func specialOf(tk *tokenizer.Tokenizer) SpecialTokens {
	var s SpecialTokens
	ids := tk.Special()
	if ids.BOS >= 0 {
		s.BOS, _ = tk.Token(ids.BOS)
	}
	if ids.EOS >= 0 {
		s.EOS, _ = tk.Token(ids.EOS)
	}
	return s
}

// Package chat renders conversations into model prompts with the chat
// templates models ship (tokenizer.chat_template, Jinja), evaluated the way
// Hugging Face's apply_chat_template does, with built-in fallbacks for
// files that have none.
package chat

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user", "assistant" (or "tool")
	Content string
}

// Options control one rendering.
type Options struct {
	// AddGenerationPrompt appends the opening of an assistant turn, so the
	// model's continuation is the answer.
	AddGenerationPrompt bool
	// Vars are extra template variables, as keyword arguments to Hugging
	// Face's apply_chat_template (e.g. enable_thinking, date_string, tools).
	Vars map[string]any
}

// SpecialTokens are the token texts templates refer to as bos_token and
// eos_token ("" when the tokenizer has none).
type SpecialTokens struct {
	BOS, EOS string
}

package chat

// chatMLSource is the built-in template for chat models without one: the
// ChatML format (<|im_start|>role\n...<|im_end|>\n) most small instruct
// models are trained on.
const chatMLSource = `{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`

// plainSource is the built-in template for base models (no chat tokens):
// the turns' texts concatenated, so each answer continues the text before
// it and every rendering extends the previous one.
const plainSource = `{% for message in messages %}{{ message['content'] }}{% endfor %}`

// ChatML returns the built-in ChatML template. Built-in sources are
// constants, so they are parsed here rather than in a child process.
func ChatML(special SpecialTokens) *Template {
	t, err := newHere("chatml", chatMLSource, special)
	if err != nil {
		panic(err) // a constant source: a parse error is a bug
	}
	return t
}

// Plain returns the built-in template for base models.
func Plain(special SpecialTokens) *Template {
	t, err := newHere("plain", plainSource, special)
	if err != nil {
		panic(err)
	}
	return t
}

// Fallback picks the built-in template for a vocabulary without a chat
// template: ChatML when it has the <|im_start|> and <|im_end|> tokens,
// else plain concatenation.
func Fallback(special SpecialTokens, hasToken func(string) bool) *Template {
	if hasToken("<|im_start|>") && hasToken("<|im_end|>") {
		return ChatML(special)
	}
	return Plain(special)
}

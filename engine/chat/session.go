package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/llm"
)

// Session is a multi-turn conversation with a model. Each turn renders the
// whole conversation with the template and feeds only the tokens after
// the longest prefix already in the model's KV cache, so earlier turns are
// not recomputed.
type Session struct {
	Gen      *llm.Generator
	Template *Template
	// AddBOS prefixes the prompt with BOS unless the template already
	// starts with it (Llama 3 templates write bos_token themselves).
	AddBOS bool
	// System, when set, is the first message of every conversation.
	System string
	// Vars are passed to the template (e.g. enable_thinking).
	Vars     map[string]any
	messages []Message
	// Reused is how many prompt tokens the last turn took from the cache.
	Reused int
}

// ErrConversationTooLong is returned (wrapped) when the rendered
// conversation does not fit the model's context.
var ErrConversationTooLong = errors.New("the conversation is longer than the context")

// Messages returns the conversation so far (without the system message).
func (s *Session) Messages() []Message { return append([]Message(nil), s.messages...) }

// Reset forgets the conversation. The KV cache is kept: a new
// conversation that starts like the old one still reuses it.
func (s *Session) Reset() { s.messages = nil }

func (s *Session) all(extra ...Message) []Message {
	var out []Message
	if s.System != "" {
		out = append(out, Message{Role: "system", Content: s.System})
	}
	out = append(out, s.messages...)
	return append(out, extra...)
}

// Prompt renders the conversation plus user's message, ready for the
// answer, and tokenizes it.
func (s *Session) Prompt(user string) ([]int32, error) {
	return s.prompt(context.Background(), user)
}

func (s *Session) prompt(ctx context.Context, user string) ([]int32, error) {
	text, err := s.Template.RenderContext(ctx, s.all(Message{Role: "user", Content: user}), Options{AddGenerationPrompt: true, Vars: s.Vars})
	if err != nil {
		return nil, err
	}
	bos := s.AddBOS
	if b := s.Template.Special().BOS; b != "" && strings.HasPrefix(text, b) {
		bos = false
	}
	return s.Gen.PromptTokens(text, bos), nil
}

// Send adds the user's message, generates the answer (streamed to emit)
// and adds it to the conversation. An answer cut short (canceled, or at
// the context's end) is kept as far as it got; on other errors the turn
// is dropped.
func (s *Session) Send(ctx context.Context, user string, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	m := s.Gen.M
	prompt, err := s.prompt(ctx, user)
	if err != nil {
		return llm.Result{}, err
	}
	if len(prompt) == 0 {
		return llm.Result{}, errors.New("chat: the rendered prompt is empty")
	}
	if len(prompt) >= m.Context() {
		return llm.Result{}, fmt.Errorf("%w: %d tokens, the context holds %d", ErrConversationTooLong, len(prompt), m.Context())
	}
	keep := commonPrefix(m.Tokens(), prompt)
	if keep == len(prompt) {
		keep-- // the last prompt token must be fed again for its logits
	}
	if err := m.Truncate(keep); err != nil {
		return llm.Result{}, err
	}
	s.Reused = keep
	res, err := s.Gen.Generate(ctx, prompt[keep:], o, emit)
	if err != nil && !errors.Is(err, llm.ErrContextFull) {
		return res, err
	}
	s.messages = append(s.messages, Message{Role: "user", Content: user}, Message{Role: "assistant", Content: res.Text})
	if err != nil {
		return res, fmt.Errorf("%w: the answer reached the end of the context (%d tokens)", ErrConversationTooLong, m.Context())
	}
	return res, nil
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

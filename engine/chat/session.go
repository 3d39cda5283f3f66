package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/harkapp/hark/engine/llm"
)

// Session is the one chat turn of Hark: the app's chat, `hark chat` and
// the API's /v1/chat/completions all answer through it. A turn renders the
// conversation with the template, adds BOS unless the template wrote it,
// fits it to the context, feeds only the tokens after the longest prefix
// already in the model's KV cache (earlier turns are not recomputed) and
// bounds the answer by the room left in the context.
//
// Send keeps the conversation in the session (hark chat); Reply answers a
// conversation the caller keeps (the app's database, an API request).
type Session struct {
	Gen      *llm.Generator
	Template *Template
	// AddBOS prefixes the prompt with BOS unless the template already
	// starts with it (Llama 3 templates write bos_token themselves).
	AddBOS bool
	// System, when set, is the first message of every conversation Send
	// renders.
	System string
	// Vars are passed to the template (e.g. enable_thinking).
	Vars map[string]any
	// Fit drops the oldest turns (a leading system message stays) while
	// the prompt would leave less than FitRoom tokens for the answer;
	// without it a conversation that does not fit the context is
	// ErrConversationTooLong.
	Fit      bool
	messages []Message
	// Reused is how many prompt tokens the last turn took from the cache
	// (the prompt's length is the turn's llm.Result.PromptTokens).
	Reused int
	// longest is the bytes of the vocabulary's longest token, found once:
	// ReplyPrompt and CompletePrompt may run at once on one session (the
	// batched engine's requests render their prompts side by side).
	longest     int
	longestOnce sync.Once
}

// FitRoom is the answer room Fit keeps: a useful answer's length, at most
// a quarter of the context.
func FitRoom(context int) int { return min(256, context/4) }

// ErrConversationTooLong is returned (wrapped) when the rendered
// conversation does not fit the model's context.
var ErrConversationTooLong = errors.New("the conversation is longer than the context")

// ErrEmptyPrompt is returned when there is nothing to continue: an empty
// prompt and a model without a BOS token.
var ErrEmptyPrompt = errors.New("the prompt is empty and the model has no BOS token to start from")

// RenderError is a template's failure to render a conversation (the
// conversation's fault, or the template's), as opposed to the model's
// failure to answer it.
type RenderError struct{ Err error }

func (e *RenderError) Error() string { return e.Err.Error() }
func (e *RenderError) Unwrap() error { return e.Err }

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
	return s.render(context.Background(), s.all(Message{Role: "user", Content: user}))
}

// render renders msgs ready for the answer and tokenizes them. A text too
// long to fit the context is refused before tokenizing: no token stands
// for more bytes than the vocabulary's longest, so a text of B bytes has
// at least B/longest tokens (a megabyte-sized message would otherwise be
// tokenized whole only to be refused).
func (s *Session) render(ctx context.Context, msgs []Message) ([]int32, error) {
	if s.Template == nil {
		return nil, errors.New("chat: the model has no chat template")
	}
	text, err := s.Template.RenderContext(ctx, msgs, Options{AddGenerationPrompt: true, Vars: s.Vars})
	if err != nil {
		return nil, &RenderError{err}
	}
	bos := s.AddBOS
	if b := s.Template.Special().BOS; b != "" && strings.HasPrefix(text, b) {
		bos = false
	}
	return s.tokens(text, bos)
}

func (s *Session) tokens(text string, bos bool) ([]int32, error) {
	n := s.Gen.M.Context()
	if least := len(text) / s.longestToken(); least >= n {
		return nil, fmt.Errorf("%w: at least %d tokens, the context holds %d", ErrConversationTooLong, least, n)
	}
	return s.Gen.PromptTokens(text, bos), nil
}

func (s *Session) longestToken() int {
	s.longestOnce.Do(func() {
		s.longest = 1
		for id := range s.Gen.Tk.VocabSize() {
			if t, ok := s.Gen.Tk.Token(int32(id)); ok && len(t) > s.longest {
				s.longest = len(t)
			}
		}
	})
	return s.longest
}

// Send adds the user's message, generates the answer (streamed to emit)
// and adds it to the conversation. An answer cut short (canceled, or at
// the context's end) is kept as far as it got; on other errors the turn
// is dropped. An answer that reaches the end of the context is
// ErrConversationTooLong (wrapped), with the answer kept.
func (s *Session) Send(ctx context.Context, user string, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	res, err := s.Reply(ctx, s.all(Message{Role: "user", Content: user}), o, emit)
	if err != nil {
		return res, err
	}
	s.messages = append(s.messages, Message{Role: "user", Content: user}, Message{Role: "assistant", Content: res.Text})
	if res.Reason == llm.StopContext {
		return res, fmt.Errorf("%w: the answer reached the end of the context (%d tokens)", ErrConversationTooLong, s.Gen.M.Context())
	}
	return res, nil
}

// Reply answers msgs, a whole conversation ending with the user's turn
// (System is not added; Send adds it). The answer is bounded by the room
// left in the context: one that fills it ends with llm.StopContext.
func (s *Session) Reply(ctx context.Context, msgs []Message, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	prompt, err := s.ReplyPrompt(ctx, msgs)
	if err != nil {
		return llm.Result{}, err
	}
	return s.generate(ctx, prompt, o, emit)
}

// ReplyPrompt is the prompt Reply answers msgs with: rendered, fitted to
// the context (Fit), checked, for a caller that generates it elsewhere
// (the batched engine). It changes nothing in s, so calls may overlap.
func (s *Session) ReplyPrompt(ctx context.Context, msgs []Message) ([]int32, error) {
	n := s.Gen.M.Context()
	for {
		prompt, err := s.render(ctx, msgs)
		if err != nil && !errors.Is(err, ErrConversationTooLong) {
			return nil, err
		}
		if err == nil && (!s.Fit || len(prompt)+FitRoom(n) <= n) {
			return prompt, s.check(prompt)
		}
		first := 0
		if len(msgs) > 0 && msgs[0].Role == "system" {
			first = 1
		}
		if !s.Fit || len(msgs)-first <= 1 {
			if err == nil {
				err = fmt.Errorf("%w: %d tokens, the context holds %d", ErrConversationTooLong, len(prompt), n)
			}
			return nil, err
		}
		msgs = append(msgs[:first:first], msgs[first+1:]...)
	}
}

// Complete continues a plain text prompt (no template; BOS as AddBOS
// says), with the same cache reuse and answer bound as Reply.
func (s *Session) Complete(ctx context.Context, text string, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	prompt, err := s.CompletePrompt(text)
	if err != nil {
		return llm.Result{}, err
	}
	return s.generate(ctx, prompt, o, emit)
}

// CompletePrompt is the prompt Complete continues text with, checked as
// ReplyPrompt's.
func (s *Session) CompletePrompt(text string) ([]int32, error) {
	prompt, err := s.tokens(text, s.AddBOS)
	if err != nil {
		return nil, err
	}
	return prompt, s.check(prompt)
}

// check refuses a prompt with nothing to continue or no room left in the
// context for an answer.
func (s *Session) check(prompt []int32) error {
	if len(prompt) == 0 {
		return fmt.Errorf("chat: %w", ErrEmptyPrompt)
	}
	if n := s.Gen.M.Context(); len(prompt) >= n {
		return fmt.Errorf("%w: %d tokens, the context holds %d", ErrConversationTooLong, len(prompt), n)
	}
	return nil
}

// generate feeds prompt after the prefix the KV cache shares with it and
// generates at most the room left in the context.
func (s *Session) generate(ctx context.Context, prompt []int32, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	m := s.Gen.M
	if err := s.check(prompt); err != nil {
		return llm.Result{}, err
	}
	keep := commonPrefix(m.Tokens(), prompt)
	if keep == len(prompt) {
		keep-- // the last prompt token must be fed again for its logits
	}
	if err := m.Truncate(keep); err != nil {
		return llm.Result{}, err
	}
	s.Reused = keep
	room := m.Context() - len(prompt)
	capped := o.MaxTokens <= 0 || o.MaxTokens >= room
	if capped {
		o.MaxTokens = room
	}
	res, err := s.Gen.Generate(ctx, prompt[keep:], o, emit)
	if errors.Is(err, llm.ErrContextFull) {
		res.Reason, err = llm.StopContext, nil
	}
	if capped && res.Reason == llm.StopMaxTokens {
		res.Reason = llm.StopContext // it stopped because the context is full
	}
	return res, err
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
)

// chatMessage is an OpenAI message; content is a string or a list of
// parts, of which the text parts are used.
type chatMessage struct {
	Role    string      `json:"role"`
	Content messageText `json:"content"`
}

type messageText string

func (t *messageText) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*t = messageText(*s)
		}
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string or a list of content parts")
	}
	var out string
	for _, p := range parts {
		if p.Type != "text" {
			return fmt.Errorf("content parts of type %q are not supported", p.Type)
		}
		out += p.Text
	}
	*t = messageText(out)
	return nil
}

type chatRequest struct {
	genParams
	Messages []chatMessage `json:"messages"`
}

type completionRequest struct {
	genParams
	Prompt json.RawMessage `json:"prompt"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// generation is one request's run: how the prompt is built and how
// results are shaped differ between the chat and text endpoints.
type generation struct {
	params genParams
	opts   llm.GenerateOptions
	prompt func(*llmModel) ([]int32, error)
	chat   bool
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeJSON(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	o, err := req.options(0)
	if err == nil && len(req.Messages) == 0 {
		err = badRequest("messages", "messages must be a non-empty list")
	}
	msgs := make([]chat.Message, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			if err == nil {
				err = badRequest(fmt.Sprintf("messages[%d].role", i), fmt.Sprintf("invalid role %q", m.Role))
			}
		}
		if m.Role == "developer" {
			m.Role = "system"
		}
		msgs[i] = chat.Message{Role: m.Role, Content: string(m.Content)}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.generate(w, r, generation{params: req.genParams, opts: o, chat: true,
		prompt: func(l *llmModel) ([]int32, error) { return l.chatPrompt(r.Context(), msgs) }})
}

// defaultCompletionTokens is OpenAI's max_tokens default for /v1/completions.
const defaultCompletionTokens = 16

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := decodeJSON(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	o, err := req.options(defaultCompletionTokens)
	if err != nil {
		writeError(w, err)
		return
	}
	var prompt string
	if len(req.Prompt) > 0 && string(req.Prompt) != "null" {
		if json.Unmarshal(req.Prompt, &prompt) != nil {
			var list []string
			if json.Unmarshal(req.Prompt, &list) != nil || len(list) != 1 {
				writeError(w, badRequest("prompt", "prompt must be a string (or a list of exactly one string)"))
				return
			}
			prompt = list[0]
		}
	}
	s.generate(w, r, generation{params: req.genParams, opts: o,
		prompt: func(l *llmModel) ([]int32, error) { return l.promptTokens(prompt, l.addBOS) }})
}

// generate runs g on its model once the model's turn comes, answering as
// one JSON object or as server-sent events.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g generation) {
	ctx := r.Context()
	l, err := s.llm(ctx, g.params.Model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer l.h.Release()
	prompt, err := g.prompt(l)
	if err != nil {
		writeError(w, err)
		return
	}
	n := l.m.Context()
	switch {
	case len(prompt) == 0:
		writeError(w, badRequest("prompt", "The prompt is empty and the model has no BOS token to start from"))
		return
	case len(prompt) >= n:
		writeError(w, newError(http.StatusBadRequest, "messages", "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens; the prompt has %d", n, len(prompt))))
		return
	}
	// Keep the KV cache of the prefix shared with the previous request
	// (a conversation's earlier turns); at least the last prompt token is
	// fed again for its logits.
	keep := 0
	for keep < len(prompt)-1 && keep < l.m.Pos() && l.m.Tokens()[keep] == prompt[keep] {
		keep++
	}
	if err := l.m.Truncate(keep); err != nil {
		writeError(w, err)
		return
	}
	if room := n - len(prompt); g.opts.MaxTokens <= 0 || g.opts.MaxTokens > room {
		g.opts.MaxTokens = room // ends as "length" rather than a full context
	}
	id, created := newID("cmpl-"), time.Now().Unix()
	object := "text_completion"
	if g.chat {
		id, object = newID("chatcmpl-"), "chat.completion"
	}
	if g.params.Stream {
		s.stream(w, ctx, l, prompt[keep:], len(prompt), g, id, object+chunkSuffix(g.chat), created)
		return
	}
	res, err := l.gen.Generate(ctx, prompt[keep:], g.opts, nil)
	if err != nil && !errors.Is(err, llm.ErrContextFull) {
		writeError(w, err)
		return
	}
	if res.Reason == llm.StopCanceled {
		writeError(w, acquireError(context.Cause(ctx)))
		return
	}
	choice := map[string]any{"index": 0, "finish_reason": finishReason(res.Reason), "logprobs": nil}
	if g.chat {
		choice["message"] = map[string]any{"role": "assistant", "content": res.Text}
	} else {
		choice["text"] = res.Text
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": object, "created": created, "model": g.params.Model,
		"system_fingerprint": nil,
		"choices":            []any{choice},
		"usage":              usage{len(prompt), len(res.Tokens), len(prompt) + len(res.Tokens)},
	})
}

func chunkSuffix(chat bool) string {
	if chat {
		return ".chunk"
	}
	return ""
}

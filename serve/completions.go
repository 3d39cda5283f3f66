package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
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
	var out strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return fmt.Errorf("content parts of type %q are not supported", p.Type)
		}
		out.WriteString(p.Text)
	}
	*t = messageText(out.String())
	return nil
}

type chatRequest struct {
	genParams
	Messages            []chatMessage `json:"messages"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Logprobs            *bool         `json:"logprobs"`
	TopLogprobs         *int          `json:"top_logprobs"`
	// Informational without tools (and tools are refused).
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
	// Refused: they would change the answer in ways not supported here.
	Tools            json.RawMessage `json:"tools"`
	ToolChoice       json.RawMessage `json:"tool_choice"`
	Functions        json.RawMessage `json:"functions"`
	FunctionCall     json.RawMessage `json:"function_call"`
	ResponseFormat   json.RawMessage `json:"response_format"`
	Audio            json.RawMessage `json:"audio"`
	Modalities       json.RawMessage `json:"modalities"`
	Prediction       json.RawMessage `json:"prediction"`
	ReasoningEffort  json.RawMessage `json:"reasoning_effort"`
	WebSearchOptions json.RawMessage `json:"web_search_options"`
}

func (r *chatRequest) refused() error {
	return refuse(
		unsupported{name: "tools", raw: r.Tools, off: []string{"[]"}},
		unsupported{name: "tool_choice", raw: r.ToolChoice, off: []string{`"none"`}},
		unsupported{name: "functions", raw: r.Functions, off: []string{"[]"}},
		unsupported{name: "function_call", raw: r.FunctionCall, off: []string{`"none"`}},
		unsupported{name: "response_format", raw: r.ResponseFormat, off: []string{`{"type":"text"}`}},
		unsupported{name: "audio", raw: r.Audio},
		unsupported{name: "modalities", raw: r.Modalities, off: []string{`["text"]`}},
		unsupported{name: "prediction", raw: r.Prediction},
		unsupported{name: "reasoning_effort", raw: r.ReasoningEffort},
		unsupported{name: "web_search_options", raw: r.WebSearchOptions},
	)
}

type completionRequest struct {
	genParams
	Prompt json.RawMessage `json:"prompt"`
	// Logprobs is the legacy field: how many top tokens to list (0-5).
	Logprobs *int `json:"logprobs"`
	// Refused unless they ask for nothing.
	Echo   json.RawMessage `json:"echo"`
	Suffix json.RawMessage `json:"suffix"`
	BestOf json.RawMessage `json:"best_of"`
}

// maxTextLogprobs is the legacy completions' limit on logprobs.
const maxTextLogprobs = 5

// generation is one request's run: how the session answers it and how
// results are shaped differ between the chat and text endpoints.
type generation struct {
	params genParams
	opts   llm.GenerateOptions
	chat   bool
	// answer runs the turn on the model's session.
	answer func(*chat.Session, context.Context, llm.GenerateOptions, func(string) error) (llm.Result, error)
	// prompt is the turn's prompt alone, for the batched engine (batched).
	prompt func(*chat.Session, context.Context) ([]int32, error)
	// promptParam names the field a prompt too long is blamed on.
	promptParam string
	// textOffset is the prompt's length in bytes (text endpoint's offsets).
	textOffset int
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeJSON(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	mt := req.MaxTokens
	if mt == nil {
		mt = req.MaxCompletionTokens
	}
	o, err := req.options(0, mt)
	if err == nil {
		err = req.refused()
	}
	if err == nil && len(req.Messages) == 0 {
		err = badRequest("messages", "messages must be a non-empty list")
	}
	if err == nil {
		err = chatLogprobOptions(&o.Sampler, req.Logprobs, req.TopLogprobs)
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
	s.generate(w, r, generation{params: req.genParams, opts: o, chat: true, promptParam: "messages",
		answer: func(cs *chat.Session, ctx context.Context, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
			return cs.Reply(ctx, msgs, o, emit)
		},
		prompt: func(cs *chat.Session, ctx context.Context) ([]int32, error) { return cs.ReplyPrompt(ctx, msgs) }})
}

// chatLogprobOptions checks the chat endpoint's logprobs and top_logprobs.
func chatLogprobOptions(smp *llm.Sampler, logprobs *bool, top *int) error {
	smp.Logprobs = logprobs != nil && *logprobs
	if top == nil {
		return nil
	}
	if *top < 0 || *top > llm.MaxTopLogprobs {
		return badRequest("top_logprobs", fmt.Sprintf("top_logprobs must be between 0 and %d, got %d", llm.MaxTopLogprobs, *top))
	}
	if !smp.Logprobs && *top > 0 {
		return badRequest("top_logprobs", "top_logprobs needs logprobs set to true")
	}
	smp.TopLogprobs = *top
	return nil
}

// defaultCompletionTokens is OpenAI's max_tokens default for /v1/completions.
const defaultCompletionTokens = 16

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if err := decodeJSON(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	o, err := req.options(defaultCompletionTokens, req.MaxTokens)
	if err == nil {
		err = refuse(unsupported{name: "echo", raw: req.Echo, off: []string{"false"}},
			unsupported{name: "suffix", raw: req.Suffix, off: []string{`""`}},
			unsupported{name: "best_of", raw: req.BestOf, off: []string{"1"}})
	}
	if err == nil && req.Logprobs != nil {
		if n := *req.Logprobs; n < 0 || n > maxTextLogprobs {
			err = badRequest("logprobs", fmt.Sprintf("logprobs must be between 0 and %d, got %d", maxTextLogprobs, n))
		} else {
			o.Sampler.Logprobs, o.Sampler.TopLogprobs = true, n
		}
	}
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
	s.generate(w, r, generation{params: req.genParams, opts: o, promptParam: "prompt", textOffset: len(prompt),
		answer: func(cs *chat.Session, ctx context.Context, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
			return cs.Complete(ctx, prompt, o, emit)
		},
		prompt: func(cs *chat.Session, _ context.Context) ([]int32, error) { return cs.CompletePrompt(prompt) }})
}

// generate runs g on its model's chat turn (chat.Session: the prompt, the
// KV cache's shared prefix, the answer's bound) once the model's turn
// comes, answering as one JSON object or as server-sent events.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g generation) {
	ctx := r.Context()
	l, err := s.llm(ctx, g.params.Model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer l.Release()
	if err := g.opts.Sampler.Check(l.M.H.NVocab); err != nil {
		writeError(w, badRequest("logit_bias", strings.TrimPrefix(err.Error(), "llm: ")))
		return
	}
	if g.chat && l.Template == nil {
		writeError(w, badRequest("model", l.TemplateErr.Error()))
		return
	}
	s.batched(l, &g)
	cs := l.Session()
	id, created := newID("cmpl-"), time.Now().Unix()
	object := "text_completion"
	if g.chat {
		id, object = newID("chatcmpl-"), "chat.completion"
	}
	if g.params.Stream {
		s.stream(w, ctx, l, cs, g, id, object+chunkSuffix(g.chat), created)
		return
	}
	res, err := g.answer(cs, ctx, g.opts, nil)
	if err != nil {
		writeError(w, g.failure(ctx, err, l.M.Context()))
		return
	}
	if res.Reason == llm.StopCanceled {
		writeError(w, acquireError(context.Cause(ctx)))
		return
	}
	fin := finishReason(res.Reason)
	lps := answerLogprobs(res)
	u := &usage{res.PromptTokens, len(res.Tokens), res.PromptTokens + len(res.Tokens)}
	if g.chat {
		c := chatChoice{Message: &chatDelta{Role: "assistant", Content: &res.Text}, FinishReason: &fin}
		if g.opts.Sampler.Logprobs {
			c.Logprobs = chatLogprobsOf(l.Gen.Tk, lps)
		}
		writeJSON(w, http.StatusOK, completion[chatChoice]{ID: id, Object: object, Created: created, Model: g.params.Model,
			Choices: []chatChoice{c}, Usage: u})
		return
	}
	c := textChoice{Text: res.Text, FinishReason: &fin}
	if g.opts.Sampler.Logprobs {
		c.Logprobs = textLogprobsOf(l.Gen.Tk, lps, true, g.textOffset)
	}
	writeJSON(w, http.StatusOK, completion[textChoice]{ID: id, Object: object, Created: created, Model: g.params.Model,
		Choices: []textChoice{c}, Usage: u})
}

// answerLogprobs are the logprobs of the answer's tokens: an end-of-turn
// token ends the answer without being part of it.
func answerLogprobs(res llm.Result) []llm.TokenLogprob {
	lps := res.Logprobs
	if res.Reason == llm.StopEOS && len(lps) > 0 && len(lps) == len(res.Tokens) {
		lps = lps[:len(lps)-1]
	}
	return lps
}

// failure is the answer for a turn that failed: the request's fault (a
// prompt over the context, a conversation the template refuses) is a 400.
func (g *generation) failure(ctx context.Context, err error, n int) error {
	var re *chat.RenderError
	switch {
	case errors.Is(err, chat.ErrConversationTooLong):
		return newError(http.StatusBadRequest, g.promptParam, "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens; %v", n, err))
	case errors.Is(err, chat.ErrEmptyPrompt):
		return badRequest("prompt", "The prompt is empty and the model has no BOS token to start from")
	case errors.Is(err, chat.ErrTemplateTimeout) || errors.Is(err, chat.ErrTemplateMemory) || ctx.Err() != nil:
		return err
	case errors.As(err, &re):
		return badRequest("messages", fmt.Sprintf("The model's chat template rejected the messages: %v", re.Err))
	}
	return err
}

func chunkSuffix(chat bool) string {
	if chat {
		return ".chunk"
	}
	return ""
}

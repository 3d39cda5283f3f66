package serve

import (
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/tokenizer"
)

// The response shapes of /v1/chat/completions and /v1/completions, as
// OpenAI's clients read them.

// completion is a completion or one chunk of a stream; C is the endpoint's
// choice type.
type completion[C any] struct {
	ID                string  `json:"id"`
	Object            string  `json:"object"`
	Created           int64   `json:"created"`
	Model             string  `json:"model"`
	SystemFingerprint *string `json:"system_fingerprint"`
	Choices           []C     `json:"choices"`
	Usage             *usage  `json:"usage,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatChoice is a chat answer (Message) or a stream's delta (Delta).
type chatChoice struct {
	Index        int           `json:"index"`
	Message      *chatDelta    `json:"message,omitempty"`
	Delta        *chatDelta    `json:"delta,omitempty"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// chatLogprobs is a chat choice's logprobs: one entry per token.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
	Refusal []chatTokenLogprob `json:"refusal"`
}

type chatTokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float32      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float32 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// textChoice is a /v1/completions choice (whole or a stream's chunk).
type textChoice struct {
	Index        int           `json:"index"`
	Text         string        `json:"text"`
	Logprobs     *textLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

// textLogprobs is the legacy completions' logprobs: parallel lists.
type textLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float32            `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// tokenText is a token's text and its bytes as OpenAI lists them (the
// text alone may be a fragment of a UTF-8 sequence).
func tokenText(tk *tokenizer.Tokenizer, id int32) (string, []int) {
	raw := tk.TokenBytes(id)
	b := make([]int, len(raw))
	for i, c := range raw {
		b[i] = int(c)
	}
	return string(raw), b
}

// chatLogprobsOf converts lps to the chat shape.
func chatLogprobsOf(tk *tokenizer.Tokenizer, lps []llm.TokenLogprob) *chatLogprobs {
	out := &chatLogprobs{Content: make([]chatTokenLogprob, 0, len(lps))}
	for _, lp := range lps {
		s, b := tokenText(tk, lp.Token)
		e := chatTokenLogprob{Token: s, Logprob: lp.Logprob, Bytes: b, TopLogprobs: make([]topLogprob, 0, len(lp.Top))}
		for _, t := range lp.Top {
			ts, tb := tokenText(tk, t.Token)
			e.TopLogprobs = append(e.TopLogprobs, topLogprob{Token: ts, Logprob: t.Logprob, Bytes: tb})
		}
		out.Content = append(out.Content, e)
	}
	return out
}

// textLogprobsOf converts lps to the completions shape; offset is the
// text offset of the first token (the prompt's length: OpenAI counts from
// the prompt's start).
func textLogprobsOf(tk *tokenizer.Tokenizer, lps []llm.TokenLogprob, top bool, offset int) *textLogprobs {
	out := &textLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TextOffset: []int{}}
	if top {
		out.TopLogprobs = []map[string]float32{}
	}
	for _, lp := range lps {
		s, _ := tokenText(tk, lp.Token)
		out.Tokens = append(out.Tokens, s)
		out.TokenLogprobs = append(out.TokenLogprobs, lp.Logprob)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(s)
		if top {
			m := make(map[string]float32, len(lp.Top))
			for _, t := range lp.Top {
				ts, _ := tokenText(tk, t.Token)
				if _, dup := m[ts]; !dup { // two ids with one text: the likelier
					m[ts] = t.Logprob
				}
			}
			out.TopLogprobs = append(out.TopLogprobs, m)
		}
	}
	return out
}

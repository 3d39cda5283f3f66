package serve

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
)

// sse writes server-sent events, flushing each so tokens reach the client
// as they are generated, except while a chunk writer owns the flushes
// (held). A failed write (the client left) is returned so generation
// stops.
type sse struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	held bool
}

func (e *sse) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.raw(b)
}

func (e *sse) raw(b []byte) error {
	if _, err := e.w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
		return err
	}
	if e.held {
		return nil
	}
	return e.rc.Flush()
}

// streamError is the event a stream ends with when generation fails after
// the headers went out.
type streamError struct {
	Error *apiError `json:"error"`
}

// stream runs g and sends it as chunks: for chat, a first chunk with the
// role, then content deltas, then one with finish_reason; usage in a last
// chunk when the client asked with stream_options; then [DONE]. With
// logprobs, each chunk carries those of the tokens its text came from.
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, l *runtime.LLMModel, cs *chat.Session, g generation, id, object string, created int64) {
	ev := &sse{w: w, rc: http.NewResponseController(w)}
	// The headers go out with the first chunk: a request refused before
	// any text (a prompt over the context, a template that refuses the
	// messages) still gets its status and a JSON error.
	started := false
	start := func() error {
		if started {
			return nil
		}
		started = true
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		if !g.chat {
			return nil
		}
		empty := ""
		c := chatChoice{Delta: &chatDelta{Role: "assistant", Content: &empty}}
		return ev.send(completion[chatChoice]{ID: id, Object: object, Created: created, Model: g.params.Model, Choices: []chatChoice{c}})
	}
	offset := g.textOffset
	chunk := func(text *string, lps []llm.TokenLogprob, finish *string) error {
		if err := start(); err != nil {
			return err
		}
		if g.chat {
			c := chatChoice{Delta: &chatDelta{Content: text}, FinishReason: finish}
			if g.opts.Sampler.Logprobs && len(lps) > 0 {
				c.Logprobs = chatLogprobsOf(l.Gen.Tk, lps)
			}
			return ev.send(completion[chatChoice]{ID: id, Object: object, Created: created, Model: g.params.Model, Choices: []chatChoice{c}})
		}
		c := textChoice{FinishReason: finish}
		if text != nil {
			c.Text = *text
		}
		if g.opts.Sampler.Logprobs && len(lps) > 0 {
			c.Logprobs = textLogprobsOf(l.Gen.Tk, lps, true, offset)
			for _, t := range c.Logprobs.Tokens {
				offset += len(t)
			}
		}
		return ev.send(completion[textChoice]{ID: id, Object: object, Created: created, Model: g.params.Model, Choices: []textChoice{c}})
	}
	// Tokens are taken before their text is emitted (the text of a token
	// may wait for the next: a stop string's prefix, a split character),
	// so each text chunk carries the logprobs taken since the last one.
	var pending []llm.TokenLogprob
	o := g.opts
	if o.Sampler.Logprobs {
		o.OnToken = func(lp llm.TokenLogprob) error { pending = append(pending, lp); return nil }
	}
	// The text chunks are written by a goroutine: emit runs inside the
	// decode chain's read-back, so a write or flush there would hold the
	// next decode (and idle a GPU) for the client's round trip.
	// The writer flushes them, once an interval (Config.StreamInterval).
	ev.held = true
	cw := newChunkWriter(chunkQueueLen, ev.rc.Flush, s.cfg.StreamInterval)
	res, err := g.answer(cs, ctx, o, func(t string) error {
		lps := pending
		pending = nil
		return cw.put(func() error { return chunk(&t, lps, nil) })
	})
	werr := cw.wait()
	ev.held = false
	if err == nil && werr != nil && res.Reason != llm.StopCanceled {
		err = werr
	}
	if !started && (err != nil || res.Reason == llm.StopCanceled) {
		if err == nil {
			err = acquireError(context.Cause(ctx))
		}
		writeError(w, g.failure(ctx, err, l.M.Context()))
		return
	}
	if res.Reason == llm.StopCanceled || ctx.Err() != nil {
		return // the client left or the request timed out: nobody to tell
	}
	if err != nil {
		ae, ok := g.failure(ctx, err, l.M.Context()).(*apiError)
		if !ok {
			ae = &apiError{Message: err.Error(), Type: "server_error"}
		}
		_ = ev.send(streamError{ae})
		return
	}
	if res.Reason == llm.StopEOS && len(pending) > 0 {
		pending = pending[:len(pending)-1] // the end-of-turn token is no part of the answer
	}
	fin := finishReason(res.Reason)
	if chunk(nil, pending, &fin) != nil {
		return
	}
	if g.params.StreamOptions != nil && g.params.StreamOptions.IncludeUsage {
		u := &usage{res.PromptTokens, len(res.Tokens), res.PromptTokens + len(res.Tokens)}
		if g.chat {
			_ = ev.send(completion[chatChoice]{ID: id, Object: object, Created: created, Model: g.params.Model, Choices: []chatChoice{}, Usage: u})
		} else {
			_ = ev.send(completion[textChoice]{ID: id, Object: object, Created: created, Model: g.params.Model, Choices: []textChoice{}, Usage: u})
		}
	}
	_ = ev.raw([]byte("[DONE]"))
}

package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/harkapp/hark/engine/llm"
)

// sse writes server-sent events, flushing each so tokens reach the client
// as they are generated. A failed write (the client left) is returned so
// generation stops.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
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
	return e.rc.Flush()
}

// stream generates feed and sends it as chunks: for chat, a first chunk
// with the role, then content deltas, then one with finish_reason; usage
// in a last chunk when the client asked with stream_options; then [DONE].
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, l *llmModel, feed []int32, promptLen int, g generation, id, object string, created int64) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ev := &sse{w: w, rc: http.NewResponseController(w)}
	chunk := func(content *string, role string, finish *string) map[string]any {
		c := map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil}
		if g.chat {
			d := map[string]any{}
			if role != "" {
				d["role"] = role
			}
			if content != nil {
				d["content"] = *content
			}
			c["delta"] = d
		} else {
			t := ""
			if content != nil {
				t = *content
			}
			c["text"] = t
		}
		return map[string]any{"id": id, "object": object, "created": created, "model": g.params.Model,
			"system_fingerprint": nil, "choices": []any{c}}
	}
	if g.chat {
		empty := ""
		if ev.send(chunk(&empty, "assistant", nil)) != nil {
			return
		}
	}
	res, err := l.gen.Generate(ctx, feed, g.opts, func(t string) error { return ev.send(chunk(&t, "", nil)) })
	if res.Reason == llm.StopCanceled || ctx.Err() != nil {
		return // the client left or the request timed out: nobody to tell
	}
	if err != nil && !errors.Is(err, llm.ErrContextFull) {
		ae := &apiError{Message: err.Error(), Type: "server_error"}
		_ = ev.send(map[string]any{"error": ae})
		return
	}
	fin := finishReason(res.Reason)
	if ev.send(chunk(nil, "", &fin)) != nil {
		return
	}
	if g.params.StreamOptions != nil && g.params.StreamOptions.IncludeUsage {
		u := usage{promptLen, len(res.Tokens), promptLen + len(res.Tokens)}
		_ = ev.send(map[string]any{"id": id, "object": object, "created": created, "model": g.params.Model, "choices": []any{}, "usage": u})
	}
	_ = ev.raw([]byte("[DONE]"))
}

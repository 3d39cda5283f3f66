package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/harkapp/hark/engine/runtime"
)

// modelPath resolves a request's model name in the models folder and
// checks that it does what the endpoint needs.
func (s *Server) modelPath(name string, want runtime.Kind) (string, error) {
	path, err := s.cfg.Store.Path(name)
	if err != nil {
		return "", newError(404, "model", "model_not_found", fmt.Sprintf("The model %q does not exist in the models folder", name))
	}
	if k := runtime.KindOf(path); k != want {
		return "", badRequest("model", fmt.Sprintf("The model %q is a %s model; this endpoint needs a %s model", name, k, want))
	}
	return path, nil
}

// loadError turns a failed wait or load into the answer for it.
func loadError(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return acquireError(err)
	}
	if errors.Is(err, runtime.ErrClosed) {
		return newError(503, "", "", "the server is shutting down")
	}
	return badRequest("model", fmt.Sprintf("The model %q could not be loaded: %v", name, err))
}

// speech waits for the named Whisper model's turn (API requests queue in
// arrival order, after dictations of the app sharing the runtime).
func (s *Server) speech(ctx context.Context, name string) (*runtime.SpeechModel, error) {
	return acquire(ctx, s, name, runtime.Speech, s.rt.Speech)
}

// llm waits for the named LLM's turn, queued as speech's.
func (s *Server) llm(ctx context.Context, name string) (*runtime.LLMModel, error) {
	return acquire(ctx, s, name, runtime.Chat, s.rt.LLM)
}

// acquire resolves name as a model of kind and waits, at interactive
// priority, for load to hand it over.
func acquire[M any](ctx context.Context, s *Server, name string, kind runtime.Kind, load func(context.Context, string, runtime.Priority) (M, error)) (M, error) {
	var none M
	path, err := s.modelPath(name, kind)
	if err != nil {
		return none, err
	}
	m, err := load(ctx, path, runtime.Interactive)
	if err != nil {
		return none, loadError(name, err)
	}
	return m, nil
}

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
	path, err := s.modelPath(name, runtime.Speech)
	if err != nil {
		return nil, err
	}
	m, err := s.rt.Speech(ctx, path, runtime.Interactive)
	if err != nil {
		return nil, loadError(name, err)
	}
	return m, nil
}

// llm waits for the named LLM's turn (API requests queue in arrival
// order, after dictations of the app sharing the runtime).
func (s *Server) llm(ctx context.Context, name string) (*runtime.LLMModel, error) {
	path, err := s.modelPath(name, runtime.Chat)
	if err != nil {
		return nil, err
	}
	h, err := s.rt.LLM(ctx, path, runtime.Interactive)
	if err != nil {
		return nil, loadError(name, err)
	}
	return h, nil
}

package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
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

// llmModel is a held LLM with what requests need around it.
type llmModel struct {
	h      *runtime.LLMModel
	m      *llm.Model
	gen    *llm.Generator
	tpl    *chat.Template
	addBOS bool
}

func (s *Server) llm(ctx context.Context, name string) (*llmModel, error) {
	path, err := s.modelPath(name, runtime.Chat)
	if err != nil {
		return nil, err
	}
	h, err := s.rt.LLM(ctx, path, runtime.Interactive)
	if err != nil {
		return nil, loadError(name, err)
	}
	return &llmModel{h: h, m: h.M, gen: h.Gen, tpl: h.Template, addBOS: h.AddBOS()}, nil
}

// chatPrompt renders messages with the model's template (plain
// concatenation for models without one) and tokenizes them.
func (l *llmModel) chatPrompt(ctx context.Context, msgs []chat.Message) ([]int32, error) {
	if l.tpl == nil {
		return nil, badRequest("model", l.h.TemplateErr.Error())
	}
	text, err := l.tpl.RenderContext(ctx, msgs, chat.Options{AddGenerationPrompt: true})
	if errors.Is(err, chat.ErrTemplateTimeout) || errors.Is(err, chat.ErrTemplateMemory) || ctx.Err() != nil {
		return nil, err
	}
	if err != nil {
		return nil, badRequest("messages", fmt.Sprintf("The model's chat template rejected the messages: %v", err))
	}
	bos := l.addBOS
	if b := l.tpl.Special().BOS; b != "" && strings.HasPrefix(text, b) {
		bos = false // the template wrote it
	}
	return l.promptTokens(text, bos)
}

package app

import (
	"context"
	"log"
	"strings"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
)

// The app's models come from one engine/runtime cache (Models' rt), shared with
// the API server started from Settings. Dictation asks for the speech
// model at runtime.Dictation priority, chat and clean-up at Interactive,
// file jobs at Batch (yielding between windows).

// speechBeams is the beam size the app decodes files with (the reference's
// default for temperature 0) and so the beam speech models are loaded for.
const speechBeams = 5

// backendChoice is the runtime's backend for the settings: auto (Metal on
// Apple GPUs, the CPU elsewhere), or the CPU when the user forces it.
func (d SettingsData) backendChoice() string {
	if d.ForceCPU {
		return backends.CPU
	}
	return backends.Auto
}

// logWriter sends the runtime's notes (why auto used the CPU) to the log.
type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	log.Print(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// withChat runs f with the chat model at path held.
func (ms *Models) withChat(ctx context.Context, path string, f func(*runtime.LLMModel) error) error {
	m, err := ms.deps.rt.LLM(ctx, path, runtime.Interactive)
	if err != nil {
		return err
	}
	defer m.Release()
	if m.Template == nil {
		return m.TemplateErr
	}
	return f(m)
}

// withSpeech runs f with the speech model at path held at priority pri.
// A Batch holder yields between windows: f sets BeforeWindow to m.Yield.
func (ms *Models) withSpeech(ctx context.Context, path string, pri runtime.Priority, f func(*runtime.SpeechModel) error) error {
	m, err := ms.deps.rt.Speech(ctx, path, pri)
	if err != nil {
		return err
	}
	defer m.Release()
	return f(m)
}

// generateChat answers history (ending with the user's turn) through the
// model's chat turn (chat.Session, shared with hark chat and the API),
// dropping the oldest turns when the conversation outgrows the context.
func generateChat(ctx context.Context, m *runtime.LLMModel, history []chat.Message, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	s := m.Session()
	s.Fit = true
	return s.Reply(ctx, history, o, emit)
}

package app

import (
	"context"
	"errors"
	"fmt"
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

// generateChat renders history (ending with the user's turn) with the
// model's template and generates the answer. The KV cache keeps whatever
// prefix the last generation shared with this prompt (the same
// conversation's earlier turns), so only the new tokens are fed. Oldest
// turns are dropped when the conversation outgrows the context.
func generateChat(ctx context.Context, m *runtime.LLMModel, history []chat.Message, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	lm := m.Gen.M
	var prompt []int32
	for {
		text, err := m.Template.RenderContext(ctx, history, chat.Options{AddGenerationPrompt: true})
		if err != nil {
			return llm.Result{}, err
		}
		bos := m.AddBOS()
		if b := m.Template.Special().BOS; b != "" && strings.HasPrefix(text, b) {
			bos = false
		}
		prompt = m.Gen.PromptTokens(text, bos)
		if len(prompt) == 0 {
			return llm.Result{}, errors.New("chat: the rendered prompt is empty")
		}
		// Leave room for an answer of a useful length.
		if len(prompt)+min(256, lm.Context()/4) <= lm.Context() {
			break
		}
		first := 0
		if len(history) > 0 && history[0].Role == "system" {
			first = 1
		}
		if len(history)-first <= 1 {
			return llm.Result{}, fmt.Errorf("%w: %d tokens, the context holds %d", chat.ErrConversationTooLong, len(prompt), lm.Context())
		}
		history = append(history[:first:first], history[first+1:]...)
	}
	keep := 0
	for toks := lm.Tokens(); keep < len(toks) && keep < len(prompt) && toks[keep] == prompt[keep]; keep++ {
	}
	if keep == len(prompt) {
		keep-- // the last prompt token is fed again for its logits
	}
	if err := lm.Truncate(keep); err != nil {
		return llm.Result{}, err
	}
	if room := lm.Context() - len(prompt); o.MaxTokens <= 0 || o.MaxTokens > room {
		o.MaxTokens = room
	}
	return m.Gen.Generate(ctx, prompt[keep:], o, emit)
}

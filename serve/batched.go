package serve

import (
	"context"
	"fmt"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
)

// batched makes g generate through the model's continuous-batching engine
// where it has one (runtime.LLMModel.Batch): the hold on the model is
// given back, the prompt rendered, and the request decodes together with
// the others, at the engine's turns of the model (a dictation's clean-up
// still goes first). The prompt is rendered after the hold is given back:
// the engine hands the model to a waiting request between its steps, so a
// render under the hold (template and tokenizer: milliseconds for a long
// prompt) kept the running streams waiting, and requests arriving together
// rendered one after another (H200: 4 streams' TTFT ~40 -> ~20 ms). Without an engine (NoBatch, a
// backend that does not batch, a batch plan that failed to load: noted in
// the log) g answers on the held model, one request after another.
func (s *Server) batched(l *runtime.LLMModel, g *generation) {
	if s.cfg.NoBatch || g.prompt == nil {
		return
	}
	eng, err := l.Batch()
	if err != nil && s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, "hark serve: requests run one after another: %v\n", err)
	}
	if eng == nil {
		return
	}
	g.answer = func(cs *chat.Session, ctx context.Context, o llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
		l.Release()
		prompt, err := g.prompt(cs, ctx)
		if err != nil {
			return llm.Result{}, err
		}
		return eng.Generate(ctx, prompt, o, 0, emit)
	}
}

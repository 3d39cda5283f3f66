package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
)

// loadedLLM is a GGUF model held from a runtime of its own (--backend),
// as generate and chat use it.
type loadedLLM struct {
	*runtime.LLMModel
	rt *runtime.Runtime
}

// openLLM resolves model (a path or a name in the models folder) and loads
// it.
func openLLM(e Env, model string, opt llm.Options) (*loadedLLM, error) {
	if model == "" {
		return nil, errors.New("--model is required (a GGUF file or a model's name)")
	}
	path, err := resolveModel(e, model)
	if err != nil {
		return nil, err
	}
	rt, err := newRuntime(e, runtime.Options{LLM: opt})
	if err != nil {
		return nil, err
	}
	l, err := rt.LLM(e.Ctx, path, runtime.Interactive)
	if err != nil {
		rt.Close()
		return nil, err
	}
	return &loadedLLM{LLMModel: l, rt: rt}, nil
}

// Close releases the model and unloads it.
func (l *loadedLLM) Close() {
	l.Release()
	l.rt.Close()
}

// samplerSeed turns the --seed flag into a seed (-1: from the clock).
func samplerSeed(seed int64) uint64 {
	if seed < 0 {
		return uint64(time.Now().UnixNano())
	}
	return uint64(seed)
}

// addSamplerFlags adds the sampling flags generate and chat share.
func addSamplerFlags(cmd *cobra.Command, smp *llm.Sampler) {
	fl := cmd.Flags()
	fl.Float32Var(&smp.Temperature, "temp", 0.8, "temperature (0: greedy)")
	fl.IntVar(&smp.TopK, "top-k", 40, "top-k (0: off)")
	fl.Float32Var(&smp.TopP, "top-p", 0.95, "top-p (1: off)")
	fl.Float32Var(&smp.MinP, "min-p", 0.05, "min-p (0: off)")
	fl.Float32Var(&smp.RepeatPenalty, "repeat-penalty", 1, "repetition penalty over the prompt's last 64 tokens and every generated one (1: off)")
}

// openSampledLLM opens model with smp, its seed resolved from seed (-1:
// random), and returns the sampler it uses.
func openSampledLLM(e Env, model string, ctxLen int, seed int64, smp llm.Sampler) (*loadedLLM, llm.Sampler, error) {
	smp.Seed = samplerSeed(seed)
	l, err := openLLM(e, model, llm.Options{Context: ctxLen})
	return l, smp, err
}

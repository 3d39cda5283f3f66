package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/llm"
)

// loadedLLM is a GGUF model loaded on its own backend (--backend), as
// generate and chat use it.
type loadedLLM struct {
	*llm.Opened
	backend backends.Backend
}

// openLLM resolves model (a path or a name in the models folder) and loads
// it.
func openLLM(cmd *cobra.Command, model string, opt llm.Options) (*loadedLLM, error) {
	if model == "" {
		return nil, errors.New("--model is required (a GGUF file or a model's name)")
	}
	path, err := resolveModel(cmd, model)
	if err != nil {
		return nil, err
	}
	be, err := openBackend(cmd, 0)
	if err != nil {
		return nil, err
	}
	o, err := llm.OpenFile(path, be, opt)
	if err != nil {
		be.Close()
		return nil, err
	}
	return &loadedLLM{Opened: o, backend: be}, nil
}

// Close releases the model, the file and the backend.
func (l *loadedLLM) Close() {
	l.Opened.Close()
	l.backend.Close()
}

// samplerSeed turns the --seed flag into a seed (-1: from the clock).
func samplerSeed(seed int64) uint64 {
	if seed < 0 {
		return uint64(time.Now().UnixNano())
	}
	return uint64(seed)
}

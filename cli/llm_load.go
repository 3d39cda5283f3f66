package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/tokenizer"
)

// loadedLLM is a GGUF model opened with its tokenizer and loaded on the
// CPU backend, as generate and chat use it.
type loadedLLM struct {
	File    *gguf.File
	Arch    llm.Arch
	Tk      *tokenizer.Tokenizer
	backend *cpu.Backend
	M       *llm.Model
}

// openLLM resolves model (a path or a name in the models folder), reads
// its architecture and tokenizer and loads it.
func openLLM(cmd *cobra.Command, model string, opt llm.Options) (*loadedLLM, error) {
	if model == "" {
		return nil, errors.New("--model is required (a GGUF file or a model's name)")
	}
	path, err := resolveModel(cmd, model)
	if err != nil {
		return nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	l := &loadedLLM{File: f}
	fail := func(err error) (*loadedLLM, error) {
		l.Close()
		return nil, fmt.Errorf("%s: %w", model, err)
	}
	if l.Arch, err = llm.LookupArch(f.Architecture()); err != nil {
		return fail(err)
	}
	if l.Tk, err = tokenizer.FromGGUFFile(f); err != nil {
		return fail(err)
	}
	l.backend = cpu.New(cpu.Options{})
	if l.M, err = llm.Load(l.backend, f, opt); err != nil {
		return fail(err)
	}
	return l, nil
}

// Close releases the model, the backend and the file.
func (l *loadedLLM) Close() {
	if l.M != nil {
		l.M.Close()
	}
	if l.backend != nil {
		l.backend.Close()
	}
	l.File.Close()
}

// samplerSeed turns the --seed flag into a seed (-1: from the clock).
func samplerSeed(seed int64) uint64 {
	if seed < 0 {
		return uint64(time.Now().UnixNano())
	}
	return uint64(seed)
}

package models

import (
	"errors"
	"fmt"

	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/modelfile"
	"github.com/harkapp/hark/engine/whisper"
)

// Task is what a model is for.
type Task string

const (
	Transcribe Task = "transcribe" // a whisper.cpp GGML speech model
	Chat       Task = "chat"       // a GGUF language model
)

// Info is what Inspect learnt about a model file.
type Info struct {
	Task   Task
	Format modelfile.Format
	Arch   string // general.architecture for GGUF, "whisper" for GGML
}

// ErrUnsupported wraps every reason a file is refused.
var ErrUnsupported = errors.New("not a supported model")

// Inspect checks that path is a model Hark can run: a whisper.cpp Whisper
// file or a GGUF language model of a supported architecture with weights of
// supported types. The error says why not.
func Inspect(path string) (Info, error) {
	f, err := modelfile.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer f.Close()
	switch f.Format {
	case modelfile.GGML:
		// whisper.OpenFile checks hyper-parameters, vocabulary, mel filters
		// and tensor types: everything short of loading.
		wf, err := whisper.OpenFile(path)
		if err != nil {
			return Info{}, fmt.Errorf("%w: not a usable Whisper model: %w", ErrUnsupported, err)
		}
		wf.Close()
		return Info{Task: Transcribe, Format: f.Format, Arch: "whisper"}, nil
	case modelfile.GGUF:
		if len(f.Tensors) == 0 {
			return Info{}, fmt.Errorf("%w: %s is a vocabulary-only GGUF (a tokenizer without weights)", ErrUnsupported, path)
		}
		a, err := llm.LookupArch(f.Architecture)
		if err != nil {
			return Info{}, fmt.Errorf("%w: %s: %w", ErrUnsupported, path, err)
		}
		if _, err := llm.ReadHParams(f.GGUF, a); err != nil {
			return Info{}, fmt.Errorf("%w: %s: %w", ErrUnsupported, path, err)
		}
		if err := f.CheckSupported(); err != nil {
			return Info{}, fmt.Errorf("%w: %s: %w", ErrUnsupported, path, err)
		}
		return Info{Task: Chat, Format: f.Format, Arch: f.Architecture}, nil
	}
	return Info{}, fmt.Errorf("%w: %s: unknown format %q", ErrUnsupported, path, f.Format)
}

// ext is the file extension a model of format fm is stored under, so Path
// finds it by name.
func ext(fm modelfile.Format) string {
	if fm == modelfile.GGUF {
		return ".gguf"
	}
	return ".bin"
}

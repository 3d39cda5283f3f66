package llm

import (
	"errors"
	"fmt"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
)

// Opened is a GGUF model file opened with its architecture and tokenizer
// and loaded on a backend: what the CLI and the API server start from.
type Opened struct {
	File *gguf.File
	Arch Arch
	Tk   *tokenizer.Tokenizer
	M    *Model
}

// OpenFile opens the GGUF file at path, reads its architecture and
// tokenizer and loads the model on backend. Errors name the file.
func OpenFile(path string, backend plan.Backend, opt Options) (*Opened, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	o := &Opened{File: f}
	fail := func(err error) (*Opened, error) {
		o.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if o.Arch, err = LookupArch(f.Architecture()); err != nil {
		return fail(err)
	}
	if o.Tk, err = tokenizer.FromGGUFFile(f); err != nil {
		return fail(err)
	}
	if o.M, err = Load(backend, f, opt); err != nil {
		return fail(err)
	}
	return o, nil
}

// AddBOS reports whether prompts start with BOS (see the function AddBOS).
func (o *Opened) AddBOS() bool { return AddBOS(o.File, o.Arch) }

// Close releases the model and the file (the backend is the caller's).
func (o *Opened) Close() error {
	var err error
	if o.M != nil {
		err = o.M.Close()
	}
	return errors.Join(err, o.File.Close())
}

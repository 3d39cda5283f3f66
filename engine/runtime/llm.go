package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
)

// LLMModel is an LLM held from the cache, with its chat template and a
// generator: use it, then Release it. The KV cache persists between
// holders (llm.Model.Truncate keeps a shared prefix).
type LLMModel struct {
	*llm.Opened
	Gen *llm.Generator
	// Template is the model's chat template; nil when the file's could
	// not be read, with TemplateErr saying why (completions still work).
	Template    *chat.Template
	TemplateErr error
	Backend     string

	r   *Runtime
	e   *entry
	out bool
}

// LLM waits for the GGUF model at path at priority pri (loading it when
// needed) and returns it held; ctx bounds the wait.
func (r *Runtime) LLM(ctx context.Context, path string, pri Priority) (*LLMModel, error) {
	e, err := r.acquire(ctx, path, pri, func(backend string, pri *atomic.Int32) (loaded, error) {
		return r.loadLLM(path, backend, pri)
	})
	if err != nil {
		return nil, err
	}
	m := e.model.(*llmModel)
	return &LLMModel{Opened: m.o, Gen: m.gen, Template: m.tpl, TemplateErr: m.tplErr, Backend: m.be.Name(), r: r, e: e}, nil
}

// Release gives the model back to the cache. Calling it again is a no-op.
func (l *LLMModel) Release() {
	if l.out {
		return
	}
	l.out = true
	l.r.release(l.e)
}

type llmModel struct {
	o      *llm.Opened
	be     backends.Backend
	gen    *llm.Generator
	tpl    *chat.Template
	tplErr error
	// release returns be to the runtime.
	release func()
	batch   batched
}

func (r *Runtime) loadLLM(path, backend string, pri *atomic.Int32) (*llmModel, error) {
	be, err := r.openBackend(backend, pri)
	if err != nil {
		return nil, err
	}
	o, err := llm.OpenFile(path, be, r.opt.LLM)
	if err != nil {
		r.closeBackend(backend)
		return nil, err
	}
	m := &llmModel{o: o, be: be, gen: llm.NewGenerator(o.M, o.Tk), release: func() { r.closeBackend(backend) }}
	if m.tpl, err = chat.ForModel(o.File, o.Tk); err != nil {
		m.tplErr = fmt.Errorf("the chat template of %s: %w", filepath.Base(path), err)
	}
	return m, nil
}

func (l *llmModel) close() {
	l.batch.close()
	l.o.Close()
	l.release()
}

func (l *llmModel) backendName() string { return l.be.Name() }

// Session is the model's chat turn (chat.Session): its template, its BOS
// rule and its generator. Each caller takes its own; the KV cache they
// share keeps whatever prefix the last turn had in common with the next.
func (l *LLMModel) Session() *chat.Session {
	return &chat.Session{Gen: l.Gen, Template: l.Template, AddBOS: l.AddBOS()}
}

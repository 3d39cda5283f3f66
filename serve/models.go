package serve

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/whisper"
)

// llmModel is a loaded GGUF model with what requests need around it.
type llmModel struct {
	o      *llm.Opened
	be     backends.Backend
	m      *llm.Model
	gen    *llm.Generator
	tpl    *chat.Template
	addBOS bool
}

func loadLLM(path string, ctxLen, threads int, backend string, log io.Writer) (*llmModel, error) {
	be, err := openBackend(backend, threads, log)
	if err != nil {
		return nil, err
	}
	o, err := llm.OpenFile(path, be, llm.Options{Context: ctxLen})
	if err != nil {
		be.Close()
		return nil, err
	}
	tpl, err := chat.ForModel(o.File, o.Tk)
	if err != nil {
		o.Close()
		be.Close()
		return nil, err
	}
	return &llmModel{o: o, be: be, m: o.M, gen: llm.NewGenerator(o.M, o.Tk), tpl: tpl, addBOS: o.AddBOS()}, nil
}

func (l *llmModel) Close() error {
	err := l.o.Close()
	l.be.Close()
	return err
}

// chatPrompt renders messages with the model's template (plain
// concatenation for models without one) and tokenizes them.
func (l *llmModel) chatPrompt(msgs []chat.Message) ([]int32, error) {
	text, err := l.tpl.Render(msgs, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		return nil, badRequest("messages", fmt.Sprintf("The model's chat template rejected the messages: %v", err))
	}
	bos := l.addBOS
	if b := l.tpl.Special().BOS; b != "" && strings.HasPrefix(text, b) {
		bos = false // the template wrote it
	}
	return l.promptTokens(text, bos)
}

// speechModel is a loaded Whisper model.
type speechModel struct {
	f  *whisper.File
	be backends.Backend
	m  *whisper.Model
}

func loadSpeech(path string, beams, threads int, backend string, log io.Writer) (*speechModel, error) {
	f, err := whisper.OpenFile(path)
	if err != nil {
		return nil, err
	}
	be, err := openBackend(backend, threads, log)
	if err != nil {
		f.Close()
		return nil, err
	}
	m, err := f.Load(be, whisper.Options{Beams: beams})
	if err != nil {
		be.Close()
		f.Close()
		return nil, err
	}
	return &speechModel{f: f, be: be, m: m}, nil
}

func (s *speechModel) Close() error {
	err := s.m.Close()
	s.be.Close()
	return errors.Join(err, s.f.Close())
}

var _ io.Closer = (*llmModel)(nil)

// openBackend opens the configured backend, noting in log why the CPU was
// used when Metal was expected.
func openBackend(name string, threads int, log io.Writer) (backends.Backend, error) {
	be, reason, err := backends.Open(name, threads)
	if err != nil {
		return nil, err
	}
	if reason != "" && log != nil {
		fmt.Fprintln(log, "hark:", reason)
	}
	return be, nil
}

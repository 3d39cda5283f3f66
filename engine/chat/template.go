package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// ErrTemplate marks an error the template raised itself
// (raise_exception), e.g. a conversation whose roles it does not accept.
var ErrTemplate = errors.New("chat template")

// maxTemplateSize bounds a template's source: real chat templates are a
// few KB (the largest tool-calling ones ~20 KB).
const maxTemplateSize = 1 << 20

// Template renders conversations into prompts. It is safe for concurrent
// use.
type Template struct {
	// Name says where the template came from ("gguf", "tokenizer_config",
	// "chatml", "plain", ...), for messages.
	Name    string
	Source  string
	special SpecialTokens
	tpl     *exec.Template
	// Now is the clock strftime_now reads (nil: time.Now).
	Now func() time.Time
}

// New compiles a Jinja chat template. special fills bos_token and
// eos_token. The source is code from a downloaded file, and gonja's
// recursive-descent parser overflows the stack on deep nesting (100,000
// parentheses), which is fatal to the whole process, so it is parsed only in
// a child process (render_child.go), as it is rendered: this process keeps
// the source and learns whether it parses.
func New(name, source string, special SpecialTokens) (*Template, error) {
	if err := checkSize(name, source); err != nil {
		return nil, err
	}
	t := &Template{Name: name, Source: source, special: special}
	if err := t.checkInChild(); err != nil {
		return nil, err
	}
	return t, nil
}

// Check reports whether source, the template called name, parses, without
// running it, the way New checks it (in a child process).
func Check(name, source string) error {
	_, err := New(name, source, SpecialTokens{})
	return err
}

// newHere compiles the template in this process: for the built-in
// templates (constant sources) and inside the child process.
func newHere(name, source string, special SpecialTokens) (*Template, error) {
	if err := checkSize(name, source); err != nil {
		return nil, err
	}
	t := &Template{Name: name, Source: source, special: special}
	env := newEnvironment(func() time.Time {
		if t.Now != nil {
			return t.Now()
		}
		return time.Now()
	})
	const id = "chat_template"
	mem, err := loaders.NewMemoryLoader(map[string]string{})
	if err != nil {
		return nil, err
	}
	loader, err := loaders.NewShiftedLoader(id, strings.NewReader(compatSource(source)), mem)
	if err != nil {
		return nil, fmt.Errorf("chat: %s template: %w", name, err)
	}
	tpl, err := compile(id, loader, env)
	if err != nil {
		return nil, fmt.Errorf("chat: parsing the %s template: %w", name, err)
	}
	t.tpl = tpl
	return t, nil
}

func checkSize(name, source string) error {
	if len(source) > maxTemplateSize {
		return fmt.Errorf("chat: the %s template is %d bytes, more than %d", name, len(source), maxTemplateSize)
	}
	return nil
}

// compile parses the template, turning a parser panic on hostile input
// into an error.
func compile(id string, loader loaders.Loader, env *exec.Environment) (tpl *exec.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return exec.NewTemplate(id, hfConfig(), loader, env)
}

// Special returns the token texts the template sees as bos_token and
// eos_token.
func (t *Template) Special() SpecialTokens { return t.special }

// Render turns messages into the prompt text, as Hugging Face's
// apply_chat_template(messages, tokenize=False, ...) does. It renders in a
// child process under a time and memory bound (render_child.go).
func (t *Template) Render(messages []Message, o Options) (string, error) {
	return t.RenderContext(context.Background(), messages, o)
}

// renderHere renders in this process, without a time or memory bound:
// only the child process of RenderContext calls it.
func (t *Template) renderHere(messages []Message, vars map[string]any, addGenerationPrompt bool) (out string, err error) {
	msgs := make([]any, len(messages))
	for i, m := range messages {
		msgs[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	data := map[string]any{}
	for k, v := range vars {
		data[k] = v
	}
	data["messages"] = msgs
	data["add_generation_prompt"] = addGenerationPrompt
	data["bos_token"] = t.special.BOS
	data["eos_token"] = t.special.EOS
	var raised []string
	data["raise_exception"] = func(msg string) (string, error) {
		raised = append(raised, msg)
		return "", fmt.Errorf("%w: %s", ErrTemplate, msg)
	}
	w := &cappedWriter{max: maxRenderSize}
	defer func() {
		if r := recover(); r != nil {
			out = ""
			if r == errTooLarge {
				err = fmt.Errorf("chat: the %s template's output exceeds %d bytes", t.Name, maxRenderSize)
			} else {
				err = fmt.Errorf("chat: rendering the %s template: %v", t.Name, r)
			}
		}
	}()
	err = t.tpl.Execute(w, exec.NewContext(data))
	if err != nil {
		if len(raised) > 0 {
			return "", fmt.Errorf("%w (%s): %s", ErrTemplate, t.Name, raised[0])
		}
		return "", fmt.Errorf("chat: rendering the %s template: %w", t.Name, err)
	}
	return w.b.String(), nil
}

// maxRenderSize bounds a rendering, so a hostile template (nested loops)
// fails instead of exhausting memory. 8 MiB of text is ~2M tokens, beyond
// any model's context.
const maxRenderSize = 8 << 20

var errTooLarge = errors.New("output too large")

// cappedWriter panics past its limit: gonja carries on after a write
// error, so only unwinding stops a runaway loop (Render recovers).
type cappedWriter struct {
	b   strings.Builder
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		panic(errTooLarge)
	}
	return w.b.Write(p)
}

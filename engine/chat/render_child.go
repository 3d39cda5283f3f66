package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A chat template is code from a downloaded file, and gonja has no hook to
// bound a rendering's steps or memory: a template looping without output,
// or doubling a string with {% set %}, would hang or exhaust the process.
// So every rendering runs in a child process of the running binary (any
// binary linking this package serves it, see init in render_serve.go),
// which can be killed: a deadline (RenderTimeout, and the caller's
// context), a memory bound (a heap watchdog) and the output cap. Spawning costs a few
// milliseconds per rendering (BENCHMARKS.md), small beside generation.

// RenderTimeout bounds one rendering; real templates take well under a
// millisecond.
var RenderTimeout = 5 * time.Second

// renderMemory bounds the child's memory: the output is capped at 8 MiB,
// so no honest template comes near it.
const renderMemory = 512 << 20

// renderArg is the child's hidden subcommand.
const renderArg = "__hark-render-chat-template"

var (
	ErrTemplateTimeout = errors.New("the model's chat template took too long to render")
	ErrTemplateMemory  = errors.New("the model's chat template took too much memory to render")
)

type renderRequest struct {
	Name                string    `json:"name"`
	Source              string    `json:"source"`
	BOS                 string    `json:"bos"`
	EOS                 string    `json:"eos"`
	Messages            []Message `json:"messages"`
	Vars                *value    `json:"vars"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	Now                 time.Time `json:"now"`
	Timeout             int64     `json:"timeout_ns"`
	// ParseOnly asks only whether the source parses (New).
	ParseOnly bool `json:"parse_only,omitempty"`
}

type renderReply struct {
	Out string `json:"out"`
	Err string `json:"err,omitempty"`
	// Kind classifies Err: "template" (raise_exception), "memory", "".
	Kind string `json:"kind,omitempty"`
}

var self struct {
	once sync.Once
	path string
	err  error
}

// RenderContext is Render under ctx: cancelling it kills the rendering.
func (t *Template) RenderContext(ctx context.Context, messages []Message, o Options) (string, error) {
	vars, err := encodeVars(o.Vars)
	if err != nil {
		return "", fmt.Errorf("chat: template variables: %w", err)
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	return t.inChild(ctx, renderRequest{Messages: messages, Vars: vars, AddGenerationPrompt: o.AddGenerationPrompt, Now: now})
}

// checkInChild parses the template in a child process: a parser crash
// (stack overflow on deep nesting) or runaway kills the child, not us.
func (t *Template) checkInChild() error {
	_, err := t.inChild(context.Background(), renderRequest{ParseOnly: true})
	switch {
	case errors.Is(err, ErrTemplateMemory):
		return fmt.Errorf("chat: parsing the %s template: it nests too deeply or is too large to parse (the parser ran out of stack or memory)", t.Name)
	case errors.Is(err, ErrTemplateTimeout):
		return fmt.Errorf("chat: parsing the %s template took longer than %v", t.Name, RenderTimeout)
	}
	return err
}

// inChild runs req (filled with the template) in a child process of this
// binary, under RenderTimeout and ctx, and returns its output.
func (t *Template) inChild(ctx context.Context, req renderRequest) (string, error) {
	self.once.Do(func() { self.path, self.err = os.Executable() })
	if self.err != nil {
		return "", fmt.Errorf("chat: finding this program to run the template: %w", self.err)
	}
	req.Name, req.Source, req.BOS, req.EOS, req.Timeout = t.Name, t.Source, t.special.BOS, t.special.EOS, int64(RenderTimeout)
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, RenderTimeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, self.path, renderArg)
	cmd.Stdin = bytes.NewReader(body)
	// The reply is the output (≤ 8 MiB) JSON-escaped (≤ 6x) plus a little.
	stdout := &limitBuffer{max: 6*maxRenderSize + 4096}
	stderr := &limitBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if rctx.Err() != nil {
		return "", fmt.Errorf("chat: %w (over %v)", ErrTemplateTimeout, RenderTimeout)
	}
	var rep renderReply
	if err := json.Unmarshal(stdout.b.Bytes(), &rep); err != nil {
		// No reply: the runtime died, e.g. a stack or allocation too large.
		if strings.Contains(stderr.b.String(), "out of memory") || strings.Contains(stderr.b.String(), "stack exceeds") {
			return "", fmt.Errorf("chat: %w (over %d MiB)", ErrTemplateMemory, renderMemory>>20)
		}
		return "", fmt.Errorf("chat: rendering the %s template failed: %v %s", t.Name, runErr, strings.TrimSpace(stderr.b.String()))
	}
	switch rep.Kind {
	case "":
		if rep.Err == "" {
			return rep.Out, nil
		}
		return "", errors.New(rep.Err)
	case "template":
		return "", fmt.Errorf("%w%s", ErrTemplate, strings.TrimPrefix(rep.Err, ErrTemplate.Error()))
	case "memory":
		return "", fmt.Errorf("chat: %w (over %d MiB)", ErrTemplateMemory, renderMemory>>20)
	}
	return "", errors.New(rep.Err)
}

// limitBuffer keeps the first max bytes and then fails the writes, so a
// child can't flood its parent. A write that crosses the limit keeps its
// head: a dying runtime's first lines ("stack exceeds", "out of memory")
// arrive in the same pipe read as kilobytes of traceback, and they are
// what inChild classifies the death by.
type limitBuffer struct {
	b   bytes.Buffer
	max int
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); len(p) > room {
		n, _ := l.b.Write(p[:max(room, 0)])
		return n, io.ErrShortWrite
	}
	return l.b.Write(p)
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
)

const chatHelp = `Type a message and press Enter to send it. End a line with \ to continue
the message on the next line. Commands: /reset clears the conversation,
/exit (or Ctrl-D) quits. Ctrl-C stops the answer being written.`

// ChatOptions is what `hark chat` was asked.
type ChatOptions struct {
	Env
	LLMFlags
	System   string
	Template string // a Jinja template file replacing the model's
	NoThink  bool
	Verbose  bool
}

// newChatCmd builds the command; runF, when not nil, replaces runChat
// (tests).
func newChatCmd(runF func(*ChatOptions) error) *cobra.Command {
	o := &ChatOptions{}
	cmd := &cobra.Command{
		Use:   "chat --model PATH [flags]",
		Short: "Chat with a local LLM in the terminal",
		Long: `Chat with a GGUF model (llama, qwen2 or qwen3 architecture) on the CPU.
The conversation is rendered with the model's chat template
(tokenizer.chat_template); files without one use ChatML when the vocabulary
has <|im_start|>/<|im_end|>, else plain concatenation of the turns (base
models). Answers stream to stdout; prompts and notices go to stderr.
The KV cache is kept across turns: each turn feeds only the tokens after
what the model has already seen.

` + chatHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate("chat"); err != nil {
				return err
			}
			o.Env = envOf(cmd)
			if runF != nil {
				return runF(o)
			}
			return runChat(o)
		},
	}
	addLLMFlags(cmd, &o.LLMFlags, 512, "most tokens per answer")
	fl := cmd.Flags()
	fl.StringVar(&o.System, "system", "", "system message starting the conversation")
	fl.StringVar(&o.Template, "template", "", "Jinja chat template file to use instead of the model's")
	fl.BoolVar(&o.NoThink, "no-think", false, "pass enable_thinking=false to the template (Qwen3: answer without a reasoning block)")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "print token counts and speed after each answer (stderr)")
	return cmd
}

// runChat runs the conversation on cmd's streams (cmd carries the
// backend and models-folder flags and the context).
func runChat(o *ChatOptions) error {
	l, smp, err := openSampledLLM(o.Env, o.Model, o.Context, o.Seed, o.Sampler)
	if err != nil {
		return err
	}
	defer l.Close()
	// The runtime's chat turn, as the app and the API answer: the
	// model's template (or --template), its BOS rule, its generator.
	s := l.Session()
	if l.Template == nil {
		return fmt.Errorf("%s: %w", o.Model, l.TemplateErr)
	}
	if o.Template != "" {
		src, err := os.ReadFile(o.Template)
		if err != nil {
			return fmt.Errorf("chat: %w", err)
		}
		if s.Template, err = chat.New(o.Template, string(src), l.Template.Special()); err != nil {
			return err
		}
	}
	s.System = o.System
	if o.NoThink {
		s.Vars = map[string]any{"enable_thinking": false}
	}
	c := &chatLoop{
		s: s, out: o.Out, errOut: o.ErrOut, in: bufio.NewReader(o.In),
		opts:    llm.GenerateOptions{Sampler: smp, MaxTokens: o.N, IgnoreEOS: o.IgnoreEOS},
		verbose: o.Verbose,
	}
	fmt.Fprintf(c.errOut, "hark chat: %s (%s template, context %d). /exit or Ctrl-D quits.\n", o.Model, s.Template.Name, l.M.Context())
	return c.run(o.Ctx)
}

// chatLoop reads messages, runs turns and handles Ctrl-C: while an answer
// is written, an interrupt cancels it; at the prompt it only reminds how
// to quit.
type chatLoop struct {
	s           *chat.Session
	out, errOut io.Writer
	in          *bufio.Reader
	opts        llm.GenerateOptions
	verbose     bool

	mu     sync.Mutex
	cancel context.CancelFunc // the running answer's, nil at the prompt
}

// chatInterrupted runs after Ctrl-C has canceled an answer; tests hold the
// answer's output until then, so the stop never races the signal's delivery.
var chatInterrupted = func() {}

func (c *chatLoop) run(ctx context.Context) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sigs:
				c.mu.Lock()
				if c.cancel != nil {
					c.cancel()
					chatInterrupted()
				} else {
					fmt.Fprintln(c.errOut, "\n(/exit or Ctrl-D quits)")
				}
				c.mu.Unlock()
			}
		}
	}()
	for {
		msg, err := c.read()
		if errors.Is(err, io.EOF) && msg == "" {
			fmt.Fprintln(c.errOut)
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("chat: reading input: %w", err)
		}
		eof := err != nil
		switch strings.TrimSpace(msg) {
		case "":
		case "/exit", "/quit":
			return nil
		case "/reset":
			c.s.Reset()
			fmt.Fprintln(c.errOut, "(conversation cleared)")
		case "/help":
			fmt.Fprintln(c.errOut, chatHelp)
		default:
			if t := strings.TrimSpace(msg); strings.HasPrefix(t, "/") && !strings.ContainsAny(t, " \n") {
				fmt.Fprintf(c.errOut, "unknown command %s (/help lists them)\n", t)
				break
			}
			if err := c.turn(ctx, msg); err != nil {
				return err
			}
		}
		if eof || ctx.Err() != nil {
			return nil
		}
	}
}

// read reads one message: lines ending in a backslash continue on the
// next line (the backslash becomes a newline).
func (c *chatLoop) read() (string, error) {
	var b strings.Builder
	fmt.Fprint(c.errOut, "> ")
	for {
		line, err := c.in.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if strings.HasSuffix(line, `\`) && err == nil {
			b.WriteString(strings.TrimSuffix(line, `\`))
			b.WriteByte('\n')
			fmt.Fprint(c.errOut, ". ")
			continue
		}
		b.WriteString(line)
		return b.String(), err
	}
}

// turn runs one exchange. Errors about the conversation (too long for the
// context, a template that refuses it) are reported and the chat goes on;
// only engine and output failures end it.
func (c *chatLoop) turn(ctx context.Context, msg string) error {
	tctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		cancel()
	}()
	start := time.Now()
	res, err := c.s.Send(tctx, msg, c.opts, func(s string) error { _, err := io.WriteString(c.out, s); return err })
	if len(res.Tokens) > 0 || res.Text != "" {
		fmt.Fprintln(c.out)
	}
	switch {
	case errors.Is(err, chat.ErrConversationTooLong):
		fmt.Fprintf(c.errOut, "error: %v; /reset starts a new conversation (or raise --ctx)\n", err)
		return nil
	case errors.Is(err, chat.ErrTemplate):
		fmt.Fprintf(c.errOut, "error: %v\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("chat: %w", err)
	}
	if res.Reason == llm.StopCanceled {
		fmt.Fprintln(c.errOut, "(answer stopped)")
	}
	if c.verbose {
		d := time.Since(start).Seconds()
		fmt.Fprintf(c.errOut, "[prompt: %d tokens reused from the cache; answer: %d tokens, %.1f tok/s; context %d/%d]\n",
			c.s.Reused, len(res.Tokens), float64(len(res.Tokens))/max(d, 1e-9), c.s.Gen.M.Pos(), c.s.Gen.M.Context())
	}
	return nil
}

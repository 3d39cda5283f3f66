package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/llm"
)

// GenerateOptions is what `hark generate` was asked.
type GenerateOptions struct {
	Env
	LLMFlags
	Slide  bool
	Prompt string
}

// newGenerateCmd builds the command; runF, when not nil, replaces
// runGenerate (tests).
func newGenerateCmd(runF func(*GenerateOptions) error) *cobra.Command {
	o := &GenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate --model PATH [flags] PROMPT",
		Short: "Continue PROMPT with a local LLM, streaming the text to stdout",
		Long: `Continue PROMPT with a GGUF model (llama, qwen2 or qwen3 architecture) on
the CPU and stream only the continuation to stdout. The prompt starts with
BOS when the file's tokenizer.ggml.add_bos_token says so (default on for the
llama family). Special-token text in PROMPT (e.g. <|im_start|>) is
recognised. PROMPT may be empty. Generation stops after -n tokens or at an
end-of-sequence token (unless --ignore-eos). --temp 0 is greedy. When the
context fills, generation stops with an error, or with --slide drops the
older half of the context (keeping the prompt's first token) and goes on.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate("generate"); err != nil {
				return err
			}
			o.Env, o.Prompt = envOf(cmd), args[0]
			if runF != nil {
				return runF(o)
			}
			return runGenerate(o)
		},
	}
	addLLMFlags(cmd, &o.LLMFlags, 128, "most tokens to generate")
	cmd.Flags().BoolVar(&o.Slide, "slide", false, "when the context fills, drop its older half and continue instead of stopping")
	return cmd
}

// runGenerate streams the continuation of o.Prompt to cmd's stdout (cmd
// carries the backend and models-folder flags and the context).
func runGenerate(o *GenerateOptions) error {
	l, smp, err := openSampledLLM(o.Env, o.Model, o.Context, o.Seed, o.Sampler)
	if err != nil {
		return err
	}
	defer l.Close()
	f, arch, tk, m := l.File, l.Arch, l.Tk, l.M
	g := llm.NewGenerator(m, tk)
	prompt := g.PromptTokens(o.Prompt, llm.AddBOS(f, arch))
	if len(prompt) > m.Context() {
		return fmt.Errorf("generate: the prompt has %d tokens, longer than the context of %d", len(prompt), m.Context())
	}
	ctx, stop := signal.NotifyContext(o.Ctx, os.Interrupt)
	defer stop()
	out := o.Out
	_, err = g.Generate(ctx, prompt, llm.GenerateOptions{Sampler: smp, MaxTokens: o.N, IgnoreEOS: o.IgnoreEOS,
		Slide: o.Slide, Keep: min(1, len(prompt))},
		func(s string) error { _, err := fmt.Fprint(out, s); return err })
	fmt.Fprintln(out)
	if errors.Is(err, llm.ErrContextFull) {
		return fmt.Errorf("generate: stopped at the end of the context (%d tokens)", m.Context())
	}
	return err
}

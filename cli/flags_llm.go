package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/llm"
)

// LLMFlags are the flags of the commands that run an LLM (chat,
// generate), defined once.
type LLMFlags struct {
	Model     string // a file or a name in the models folder
	N         int    // most tokens to generate (per answer, for chat)
	Context   int    // context length cap (0: the file's)
	Seed      int64  // -1: random
	IgnoreEOS bool
	Sampler   llm.Sampler
}

// addLLMFlags adds the LLM flags, the sampling flags and the backend flags
// to cmd; n and nHelp are the command's -n default and meaning.
func addLLMFlags(cmd *cobra.Command, fl *LLMFlags, n int, nHelp string) {
	f := cmd.Flags()
	addBackendFlag(cmd)
	f.StringVar(&fl.Model, "model", "", "GGUF model: a file or the name of a model in the models folder")
	f.IntVarP(&fl.N, "n", "n", n, nHelp)
	f.IntVar(&fl.Context, "ctx", 0, fmt.Sprintf("context length cap (0: the file's, at most %d)", llm.DefaultContext))
	f.Int64Var(&fl.Seed, "seed", -1, "sampling seed (-1: random)")
	f.BoolVar(&fl.IgnoreEOS, "ignore-eos", false, "keep generating after end-of-sequence (end-of-turn) tokens, until -n")
	addSamplerFlags(cmd, &fl.Sampler)
}

// validate checks the LLM flags of command name before anything opens.
func (fl *LLMFlags) validate(name string) error {
	if fl.N <= 0 {
		return fmt.Errorf("%s: -n must be positive, got %d", name, fl.N)
	}
	return nil
}

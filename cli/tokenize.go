package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/spf13/cobra"
)

// TokenizeOptions is what `hark tokenize` was asked.
type TokenizeOptions struct {
	Model      string // GGUF file (or name in the models folder) to read the tokenizer from
	Tokenizer  string // tokenizer file or folder
	AddSpecial bool
	Text       string
	Env
}

// newTokenizeCmd builds the command; runF, when not nil, replaces
// runTokenize (tests check the options a command line gives).
func newTokenizeCmd(runF func(*TokenizeOptions) error) *cobra.Command {
	o := &TokenizeOptions{}
	cmd := &cobra.Command{
		Use:   "tokenize (--model FILE | --tokenizer PATH) [--add-special] TEXT",
		Short: "Print the token ids of TEXT as a JSON array",
		Long: `Tokenize TEXT and print the ids as one JSON array line ([] for empty text).

--model reads the tokenizer from a GGUF file's metadata. --tokenizer reads a
tokenizer.json (or .json.gz), a tokenizer.model (SentencePiece or tiktoken
ranks), a vocab.json with merges.txt beside it, or a directory holding them
(tokenizer.json wins); a tokenizer_config.json beside them is applied.
Special-token text such as <|im_start|> is always recognised; --add-special
also adds BOS/EOS as the tokenizer's configuration says. Put "--" before a
TEXT that starts with "-".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Text, o.Env = args[0], envOf(cmd)
			if (o.Model == "") == (o.Tokenizer == "") {
				return errors.New("tokenize: give exactly one of --model FILE or --tokenizer PATH")
			}
			if runF != nil {
				return runF(o)
			}
			return runTokenize(o)
		},
	}
	cmd.Flags().StringVar(&o.Model, "model", "", "GGUF model file to read the tokenizer from")
	cmd.Flags().StringVar(&o.Tokenizer, "tokenizer", "", "tokenizer file or directory")
	cmd.Flags().BoolVar(&o.AddSpecial, "add-special", false, "add BOS/EOS as the tokenizer's configuration says")
	return cmd
}

// runTokenize prints o.Text's token ids (cmd resolves model names).
func runTokenize(o *TokenizeOptions) error {
	var tk *tokenizer.Tokenizer
	var err error
	switch {
	case o.Model != "":
		var path string
		if path, err = resolveModel(o.Env, o.Model); err != nil {
			return err
		}
		tk, err = tokenizer.LoadGGUF(path)
	case strings.HasSuffix(strings.ToLower(o.Tokenizer), ".gguf"):
		tk, err = tokenizer.LoadGGUF(o.Tokenizer)
	default:
		tk, err = tokenizer.Load(o.Tokenizer)
	}
	if err != nil {
		return err
	}
	ids := tk.Encode(o.Text, o.AddSpecial)
	if ids == nil {
		ids = []int32{}
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.Out, "%s\n", b)
	return err
}

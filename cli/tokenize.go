package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/tokenizer"
	"github.com/spf13/cobra"
)

func newTokenizeCmd() *cobra.Command {
	var model, tokPath string
	var addSpecial bool
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
			if (model == "") == (tokPath == "") {
				return errors.New("tokenize: give exactly one of --model FILE or --tokenizer PATH")
			}
			var tk *tokenizer.Tokenizer
			var err error
			switch {
			case model != "":
				var path string
				if path, err = resolveModel(cmd, model); err != nil {
					return err
				}
				tk, err = tokenizer.LoadGGUF(path)
			case strings.HasSuffix(strings.ToLower(tokPath), ".gguf"):
				tk, err = tokenizer.LoadGGUF(tokPath)
			default:
				tk, err = tokenizer.Load(tokPath)
			}
			if err != nil {
				return err
			}
			ids := tk.Encode(args[0], addSpecial)
			if ids == nil {
				ids = []int32{}
			}
			b, err := json.Marshal(ids)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "GGUF model file to read the tokenizer from")
	cmd.Flags().StringVar(&tokPath, "tokenizer", "", "tokenizer file or directory")
	cmd.Flags().BoolVar(&addSpecial, "add-special", false, "add BOS/EOS as the tokenizer's configuration says")
	return cmd
}

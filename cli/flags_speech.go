package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// speechFlags are the flags of the commands that run a Whisper model
// (transcribe, stream), defined once.
type speechFlags struct {
	model    string
	language string
	prompt   string
	threads  int
}

// addSpeechFlags adds the speech flags and the backend flags to cmd.
func addSpeechFlags(cmd *cobra.Command, fl *speechFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.model, "model", "", "Whisper model: a whisper.cpp .bin file or the name of a model in the models folder")
	f.StringVar(&fl.language, "language", "", "spoken language code (multilingual models; when empty, transcribe detects it and stream uses English)")
	f.StringVar(&fl.prompt, "prompt", "", "initial prompt: context or custom vocabulary the decoder is prompted with")
	f.IntVar(&fl.threads, "threads", 0, "worker threads (0 = one per physical core)")
	addBackendFlag(cmd)
}

// validate checks the speech flags before anything is opened.
func (fl *speechFlags) validate() error {
	if fl.model == "" {
		return errors.New("no model: pass --model with a whisper.cpp .bin file or a model's name")
	}
	return nil
}

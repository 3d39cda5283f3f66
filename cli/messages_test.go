package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// The errors a new user meets, each one line they can act on (and a usage
// line for wrong arguments), with its exit status. Each case fails before
// any model is loaded or audio decoded, except the missing audio file.
func TestUserMessages(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	jfk := shared.Path(t, "audio", "jfk.wav")
	dir := t.TempDir()
	missingModel := filepath.Join(dir, "nope.bin")
	t.Chdir(dir)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing audio file", []string{"transcribe", "--model", model, "nosuch.wav"}, 1,
			"hark: nosuch.wav: no such file\n"},
		{"missing model file", []string{"transcribe", "--model", missingModel, jfk}, 1,
			"hark: " + missingModel + ": no such model file\n"},
		{"catalog model not installed", []string{"transcribe", "--models-dir", dir, "--model", "whisper-base.en", jfk}, 1,
			"hark: the model whisper-base.en is not installed: download it with `hark models pull whisper-base.en`\n"},
		{"unknown model name", []string{"transcribe", "--models-dir", dir, "--model", "nosuchmodel", jfk}, 1,
			`hark: no model called "nosuchmodel" in ` + dir + ": give a model file, or a name from `hark models list`\n"},
		{"inspect without a file", []string{"inspect"}, 2,
			"hark: wrong number of arguments: want 1, got 0\nusage: hark inspect FILE [flags]\n"},
		{"negative threads", []string{"transcribe", "--threads", "-1", "--model", model, jfk}, 2,
			"hark: --threads -1: want 0 (one per physical core) or more\nusage: hark transcribe --model PATH [flags] FILE...\n"},
		{"unknown flag", []string{"transcribe", "--bogus"}, 2,
			"hark: unknown flag: --bogus\nusage: hark transcribe --model PATH [flags] FILE...\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			require.Equal(t, c.code, code, errs)
			require.Equal(t, c.want, errs)
			require.Empty(t, out)
		})
	}
}

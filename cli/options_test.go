package cli

import (
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/bridge"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/serve"
)

// execute runs a command built with a runF that keeps its options, so a
// test sees what a command line asks for without running it.
func execute(cmd *cobra.Command, args ...string) error {
	// (never nil: cobra reads a nil list from os.Args, the test binary's
	// own flags: "cli.test -test.run TestServeOptions" failed)
	cmd.SetArgs(append([]string{}, args...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// The command line's flags and argument land in TokenizeOptions; exactly
// one tokenizer source is required before anything runs.
func TestTokenizeOptions(t *testing.T) {
	var got *TokenizeOptions
	run := func(args ...string) error {
		got = nil
		return execute(newTokenizeCmd(func(o *TokenizeOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--tokenizer", "tok.json", "--add-special", "--", "-x"))
	require.Equal(t, "tok.json", got.Tokenizer)
	require.Empty(t, got.Model)
	require.True(t, got.AddSpecial)
	require.Equal(t, "-x", got.Text)
	require.ErrorContains(t, run("--tokenizer", "a", "--model", "b", "x"), "exactly one")
	require.Nil(t, got)
	require.ErrorContains(t, run("x"), "exactly one")
}

func TestQuantizeOptions(t *testing.T) {
	var got *QuantizeOptions
	run := func(args ...string) error {
		got = nil
		return execute(newQuantizeCmd(func(o *QuantizeOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("in.bin", "out.bin"))
	require.Equal(t, QuantizeOptions{Type: ggml.Q8_0, In: "in.bin", Out: "out.bin"}, *got, "q8_0 by default")
	require.NoError(t, run("--type", "q5_1", "in.bin", "out.bin"))
	require.Equal(t, ggml.Q5_1, got.Type)
	require.Error(t, run("--type", "q9", "in.bin", "out.bin"))
	require.Nil(t, got, "a bad type is refused before anything runs")
}

func TestGenerateOptions(t *testing.T) {
	var got *GenerateOptions
	run := func(args ...string) error {
		got = nil
		return execute(newGenerateCmd(func(o *GenerateOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--model", "m.gguf", "Once upon"))
	require.Equal(t, "m.gguf", got.Model)
	require.Equal(t, "Once upon", got.Prompt)
	require.Equal(t, 128, got.N)
	require.EqualValues(t, -1, got.Seed)
	require.InDelta(t, 0.8, got.Sampler.Temperature, 1e-6)
	require.NoError(t, run("--model", "m", "-n", "5", "--temp", "0", "--slide", "--ignore-eos", "--seed", "7", "--top-k", "3", ""))
	require.Equal(t, GenerateOptions{Env: got.Env, LLMFlags: LLMFlags{Model: "m", N: 5, Seed: 7, IgnoreEOS: true, Sampler: got.Sampler},
		Slide: true, Prompt: ""}, *got)
	require.Zero(t, got.Sampler.Temperature)
	require.Equal(t, 3, got.Sampler.TopK)
	require.ErrorContains(t, run("--model", "m", "-n", "0", "x"), "-n must be positive")
	require.Nil(t, got)
}

func TestServeOptions(t *testing.T) {
	var got *ServeOptions
	run := func(args ...string) error {
		got = nil
		return execute(newServeCmd(func(o *ServeOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run())
	require.Equal(t, serve.DefaultAddr, got.Addr, "loopback by default")
	require.Equal(t, serve.DefaultWhisperBeam, got.Config.WhisperBeam)
	require.NoError(t, run("--addr", "0.0.0.0:9000", "--api-key-file", "k", "--cors-origin", "http://a", "--cors-origin", "http://b", "--beam", "1", "--threads", "3"))
	require.Equal(t, "0.0.0.0:9000", got.Addr)
	require.Equal(t, "k", got.APIKeyFile)
	require.Equal(t, []string{"http://a", "http://b"}, got.Config.CORSOrigins)
	require.Equal(t, 1, got.Config.WhisperBeam)
	require.Equal(t, 3, got.Config.Threads)
	require.False(t, got.Config.NoBatch, "requests decode together by default")
	require.NoError(t, run("--no-batch"))
	require.True(t, got.Config.NoBatch)
	require.ErrorContains(t, run("--api-key", "x", "--api-key-file", "k"), "give one")
	require.Nil(t, got)
}

func TestUIOptions(t *testing.T) {
	var got *UIOptions
	run := func(args ...string) error {
		got = nil
		return execute(newUICmd(func(o *UIOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--data-dir", "d", "--assets", "a", "--allow-host", "h"))
	require.Equal(t, io.Discard, got.Out, "the command's streams")
	require.Equal(t, UIOptions{Env: got.Env, Addr: "127.0.0.1:0", DataDir: "d", Assets: "a", AllowHosts: []string{"h"}, MaxUpload: bridge.DefaultMaxUpload,
		ChatMaxTokens: app.DefaultChatMaxTokens}, *got)
	require.NoError(t, run("--chat-max-tokens", "48"))
	require.Equal(t, 48, got.ChatMaxTokens)
	require.ErrorContains(t, run("--chat-max-tokens", "0"), "--chat-max-tokens must be at least 1, got 0")
	require.Nil(t, got)
	require.NoError(t, run("--threads", "1"))
	require.Equal(t, 1, got.Threads)
	require.ErrorContains(t, run("--threads", "-1"), "--threads must be 0 (one per physical core) or more, got -1")
	require.Nil(t, got)
	require.ErrorContains(t, run("--addr", "0.0.0.0:80"), "loopback addresses only")
	require.Nil(t, got, "a reachable address is refused before anything opens")
}

func TestInspectOptions(t *testing.T) {
	var got *InspectOptions
	cmd := newInspectCmd(func(o *InspectOptions) error { got = o; return nil })
	require.NoError(t, execute(cmd, "--json", "m.gguf"))
	require.Equal(t, "m.gguf", got.File)
	require.True(t, got.JSON)
	require.Error(t, execute(newInspectCmd(func(*InspectOptions) error { return nil })), "a file is required")
}

func TestBenchLLMOptions(t *testing.T) {
	var got *BenchLLMOptions
	run := func(args ...string) error {
		got = nil
		return execute(newBenchLLMCmd(func(o *BenchLLMOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--model", "a.gguf", "--model", "b.gguf", "--pp", "0", "-r", "2", "-t", "4"))
	require.Equal(t, []string{"a.gguf", "b.gguf"}, got.Models)
	require.Equal(t, 0, got.PP)
	require.Equal(t, 128, got.TG)
	require.Equal(t, 2, got.Reps)
	require.Equal(t, 4, got.Threads)
	require.Equal(t, []string{"f16", "q8_0", "q4_0"}, got.Types)
	for _, bad := range [][]string{{"--pp", "0", "--tg", "0"}, {"--reps", "0"}, {"--threads", "0"}, {"--layers", "0"}, {"--gpu", "-1"}} {
		require.Error(t, run(bad...), "%v", bad)
		require.Nil(t, got, "%v is refused before anything runs", bad)
	}
}

func TestTranscribeOptions(t *testing.T) {
	var got *transcribeOptions
	run := func(args ...string) error {
		got = nil
		return execute(newTranscribeCmd(func(o *transcribeOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--model", "kit", "--format", "srt", "--beam", "1", "--word-timestamps", "a.wav", "b.mp3"))
	require.Equal(t, []string{"a.wav", "b.mp3"}, got.files)
	require.Equal(t, "kit", got.model)
	require.Equal(t, "srt", got.format)
	require.Equal(t, 1, got.beam)
	require.True(t, got.wordTimestamps)
	for _, bad := range [][]string{{"a.wav"}, {"--model", "m", "--format", "doc", "a.wav"}, {"--model", "m", "--beam", "0", "a.wav"}, {"--model", "m", "--temperature", "2", "a.wav"}} {
		require.Error(t, run(bad...), "%v", bad)
		require.Nil(t, got, "%v is refused before anything opens", bad)
	}
}

func TestStreamOptions(t *testing.T) {
	var got *streamOptions
	run := func(args ...string) error {
		got = nil
		return execute(newStreamCmd(func(o *streamOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--model", "kit", "--json", "--speed", "4", "-"))
	require.Equal(t, "auto", got.Backend)
	require.Equal(t, streamOptions{Env: got.Env, speechFlags: speechFlags{model: "kit"}, src: "-", json: true, speed: 4}, *got)
	require.ErrorContains(t, run("a.wav"), "no model")
	require.ErrorContains(t, run("--model", "m", "--speed", "0", "a.wav"), "--speed")
	require.Nil(t, got)
}

func TestChatOptions(t *testing.T) {
	var got *ChatOptions
	run := func(args ...string) error {
		got = nil
		return execute(newChatCmd(func(o *ChatOptions) error { got = o; return nil }), args...)
	}
	require.NoError(t, run("--model", "qwen", "--system", "Be brief.", "--no-think", "-n", "64", "-v", "--template", "t.jinja"))
	require.Equal(t, "qwen", got.Model)
	require.Equal(t, "Be brief.", got.System)
	require.Equal(t, "t.jinja", got.Template)
	require.True(t, got.NoThink)
	require.True(t, got.Verbose)
	require.Equal(t, 64, got.N)
	require.ErrorContains(t, run("--model", "m", "-n", "-1"), "-n must be positive")
	require.Nil(t, got)
}

func TestModelsOptions(t *testing.T) {
	var got *ModelsOptions
	keep := func(o *ModelsOptions) error { got = o; return nil }
	require.NoError(t, execute(newModelsPullCmd(keep), "--mirror", "https://m.example", "a", "b"))
	require.Equal(t, []string{"a", "b"}, got.Names)
	require.Equal(t, "https://m.example", got.Mirror)
	require.Equal(t, io.Discard, got.Out, "the command's streams")
	require.NotNil(t, got.Ctx)
	require.NoError(t, execute(newModelsListCmd(keep), "--installed"))
	require.True(t, got.Installed)
	require.NoError(t, execute(newModelsPathCmd(keep)))
	require.Empty(t, got.Names)
	got = nil
	require.Error(t, execute(newModelsRmCmd(keep)), "rm needs a name")
	require.Error(t, execute(newModelsImportCmd(keep), "a", "b"), "import takes one file")
	require.Nil(t, got)
}

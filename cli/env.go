package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// IOStreams are where a command reads and writes (cli/cli's iostreams).
// A command's run takes them from its options, never os.Stdin or
// os.Stdout, so a test hands in buffers and calls the run directly.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // results
	ErrOut io.Writer // progress, notes and warnings
}

// Env is what a command's run gets besides its own flags: the streams, the
// context, and the root's persistent flags. RunE fills it from the
// command (envOf); tests build it.
type Env struct {
	IOStreams
	Ctx       context.Context
	ModelsDir string // --models-dir ("" = the default folder)
	// Backend and GPU are --backend and --gpu, for the commands that load
	// models ("" = auto).
	Backend string
	GPU     int
	// ProcessExits: the process ends when the command returns (Execute,
	// not a test running it in-process), so a one-shot command may leave
	// what it loaded to the operating system (runtime.CloseForExit).
	ProcessExits bool
}

// envOf is cmd's streams, context and persistent flags.
func envOf(cmd *cobra.Command) Env {
	dir, _ := cmd.Flags().GetString(modelsDirFlag)
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	backend, _ := cmd.Flags().GetString(backendFlag)
	gpu, _ := cmd.Flags().GetInt(gpuFlag)
	exits, _ := ctx.Value(processExitsKey{}).(bool)
	return Env{IOStreams: IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}, Ctx: ctx,
		ModelsDir: dir, Backend: backend, GPU: gpu, ProcessExits: exits}
}

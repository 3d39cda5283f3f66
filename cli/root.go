// Package cli implements hark's command-line interface. Conventions for
// every command: results on stdout, progress and logs on stderr, exit code
// 0 only when everything asked for succeeded.
//
// Each command follows cli/cli's layout: newXCmd(runF) binds the flags to
// an XOptions struct, whose Env (env.go) carries the streams, the context
// and the root's flags; RunE checks the options, then calls runF (a test's)
// or runX(opts). Runs never read os.Stdin/os.Stdout or the cobra command,
// so tests call them directly. Flags several commands share are defined
// once (flags_speech.go, flags_llm.go, backend.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/drivers"
	"github.com/harkapp/hark/internal/usererr"
)

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitInterrupted is the status of a command ended by Ctrl-C (128 +
// SIGINT, as shells report it).
const exitInterrupted = 130

// exitCode is the process status for a command's error.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return 1
}

// NewRoot builds the command tree with the given output streams.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "hark",
		Short:         "Local speech-to-text and LLM chat on Hark's own inference engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	drivers.Register() // the GPU backends, before any command opens one
	addModelsDirFlag(root)
	addVersion(root, nil) // --version and `hark version`
	root.AddCommand(
		// Speech and chat.
		newTranscribeCmd(nil),
		newStreamCmd(nil),
		newChatCmd(nil),
		newGenerateCmd(nil),
		// Serving: the API and the UI in a browser.
		newServeCmd(nil),
		newUICmd(nil),
		newDictateCmd(nil),
		newMeetingCmd(nil),
		// Models and their files.
		newModelsCmd(),
		newInspectCmd(nil),
		newTokenizeCmd(nil),
		newQuantizeCmd(nil),
		// Measurements.
		newBenchCmd(),
	)
	withUsage(root) // usage.go
	return root
}

// Execute runs the CLI with args and returns the process exit code.
func Execute(args []string) int {
	defer startCPUProfile(os.Stderr)()
	return runCtx(context.WithValue(context.Background(), processExitsKey{}, true), args, os.Stdin, os.Stdout, os.Stderr)
}

// processExitsKey marks the context of a command run by Execute, whose
// process exits when the command returns (Env.ProcessExits).
type processExitsKey struct{}

// run is Execute on the given streams (tests run it in-process): a
// failure is one line on stderr and its exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCtx(context.Background(), args, stdin, stdout, stderr)
}

func runCtx(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	args, err := urlArgs(args) // hark hark://dictate/toggle (url.go)
	if err == nil {
		root := NewRoot(stdout, stderr)
		root.SetIn(stdin)
		root.SetArgs(args)
		err = root.ExecuteContext(ctx)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hark:", usererr.Message(err, usererr.Options{}))
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "usage:", ue.cmd.UseLine())
		}
	}
	return exitCode(err)
}

package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/control"
)

// dictateWait bounds `hark dictate stop`, which waits for the transcript
// (a long recording on a slow machine); the other commands answer at once.
const dictateWait = 10 * time.Minute

// DictateOptions is what `hark dictate` was asked, and its streams.
type DictateOptions struct {
	IOStreams
	Command string // one of control.Commands
	DataDir string // the running app's ("" = the default data folder)
}

// newDictateCmd builds the command; runF, when not nil, replaces
// runDictate (tests).
func newDictateCmd(runF func(*DictateOptions) error) *cobra.Command {
	o := &DictateOptions{}
	cmd := &cobra.Command{
		Use:   "dictate start|stop|toggle|cancel|status|paste-last [--data-dir DIR]",
		Short: "Control dictation in the running app or `hark ui`",
		Long: `Control dictation in the Hark app (or ` + "`hark ui`" + `) that is running on the
data folder, through its control socket (hark.sock in the data folder,
owner-only). For desktop shortcuts where apps get no global hotkey
(Wayland): bind "hark dictate toggle".

  start       start recording
  stop        stop, wait for the transcript and print it
  toggle      start, or stop (the text is inserted as with the hotkey)
  cancel      stop without transcribing or inserting (the recording stays in History)
  status      print the state (idle, recording, transcribing) and the last text
  paste-last  insert the last transcript again

Without a running app it says so and exits with status 1.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(control.Commands, args[0]) {
				return fmt.Errorf("want one of: %s", strings.Join(control.Commands, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IOStreams, o.Command = envOf(cmd).IOStreams, args[0]
			if runF != nil {
				return runF(o)
			}
			return runDictate(o)
		},
	}
	cmd.Flags().StringVar(&o.DataDir, "data-dir", "", "the running app's data folder (default $"+app.EnvDataDir+" or the application-support folder)")
	return cmd
}

// sendControl sends o.Command to the app running on o.DataDir (or the
// default data folder).
func sendControl(o *DictateOptions) (control.Reply, error) {
	dir := o.DataDir
	if dir == "" {
		d, err := app.DefaultDataDir()
		if err != nil {
			return control.Reply{}, err
		}
		dir = d
	}
	return control.Send(dir, o.Command, dictateWait)
}

// runDictate sends o.Command to the app running on the data folder and
// prints its answer: the transcript (stop) or the state (status) on Out,
// the state after the others on ErrOut.
func runDictate(o *DictateOptions) error {
	r, err := sendControl(o)
	if err != nil {
		return err
	}
	switch o.Command {
	case "stop":
		fmt.Fprintln(o.Out, r.Text)
	case "status":
		fmt.Fprintln(o.Out, r.State)
		if r.Text != "" {
			fmt.Fprintln(o.Out, r.Text)
		}
	default:
		fmt.Fprintln(o.ErrOut, r.State)
	}
	return nil
}

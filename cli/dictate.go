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

func newDictateCmd() *cobra.Command {
	var dataDir string
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
			dir := dataDir
			if dir == "" {
				d, err := app.DefaultDataDir()
				if err != nil {
					return err
				}
				dir = d
			}
			r, err := control.Send(dir, args[0], dictateWait)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch args[0] {
			case "stop":
				fmt.Fprintln(out, r.Text)
			case "status":
				fmt.Fprintln(out, r.State)
				if r.Text != "" {
					fmt.Fprintln(out, r.Text)
				}
			default:
				fmt.Fprintln(cmd.ErrOrStderr(), r.State)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the running app's data folder (default $"+app.EnvDataDir+" or the application-support folder)")
	return cmd
}

package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/app"
)

// meetingSubcommands are `hark meeting`'s, each the socket's "meeting-" one.
var meetingSubcommands = []string{"start", "stop", "status"}

// newMeetingCmd builds `hark meeting`; runF, when not nil, replaces
// runMeeting (tests).
func newMeetingCmd(runF func(*DictateOptions) error) *cobra.Command {
	o := &DictateOptions{}
	cmd := &cobra.Command{
		Use:   "meeting start|stop|status [--data-dir DIR]",
		Short: "Record a meeting in the running app or `hark ui` (Linux)",
		Long: `Record a meeting in the Hark app (or ` + "`hark ui`" + `) that is running on the data
folder, through its control socket: the microphone ("You") and what the
computer plays ("Others", the default output's monitor) as two channels,
written to disk as they are recorded, with a live transcript by speaker.

  start   start recording
  stop    stop; the notes (notes.md, transcript.json) are written beside
          the audio in the data folder's meetings/ and their path printed
  status  print the state (idle, recording), the meeting, and meetings a
          crash cut short (made whole when the app started)

Without a running app it says so and exits with status 1.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(meetingSubcommands, args[0]) {
				return fmt.Errorf("want one of: %s", strings.Join(meetingSubcommands, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IOStreams, o.Command = envOf(cmd).IOStreams, "meeting-"+args[0]
			if runF != nil {
				return runF(o)
			}
			return runMeeting(o)
		},
	}
	cmd.Flags().StringVar(&o.DataDir, "data-dir", "", "the running app's data folder (default $"+app.EnvDataDir+" or the application-support folder)")
	return cmd
}

// runMeeting sends o.Command to the app and prints the state and status.
func runMeeting(o *DictateOptions) error {
	r, err := sendControl(o)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out, r.State)
	if r.Text != "" {
		fmt.Fprintln(o.Out, r.Text)
	}
	return nil
}

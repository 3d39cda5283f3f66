package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/control"
)

// meetingSubcommands are `hark meeting`'s, each the socket's "meeting-" one.
var meetingSubcommands = []string{"start", "stop", "status", "resume", "finish"}

// newMeetingCmd builds `hark meeting`; runF, when not nil, replaces
// runMeeting (tests).
func newMeetingCmd(runF func(*DictateOptions) error) *cobra.Command {
	o := &DictateOptions{}
	cmd := &cobra.Command{
		Use:   "meeting start|stop|status|resume|finish [ID] [--data-dir DIR]",
		Short: "Record a meeting in the running app or `hark ui` (Linux)",
		Long: `Record a meeting in the Hark app (or ` + "`hark ui`" + `) that is running on the data
folder, through its control socket: the microphone ("You") and what the
computer plays ("Others", the default output's monitor) as two channels,
written to disk as they are recorded, with a live transcript by speaker.

  start   start recording
  stop    stop; the notes (notes.md, transcript.json) are written beside
          the audio in the data folder's meetings/ and their path printed
  status  print the state (idle, recording), the meeting, and meetings a
          crash cut short (made whole when the app started, and waiting
          to be resumed or finished)
  resume [ID]  record on into the meeting ID that a crash cut short (the
          only one, without ID): the same recording, continued after
          what was kept; stop it as usual
  finish [ID]  finish it with what was recorded: it goes to History and
          its final pass runs

Without a running app it says so and exits with status 1.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 || !slices.Contains(meetingSubcommands, args[0]) {
				return fmt.Errorf("want one of: %s", strings.Join(meetingSubcommands, ", "))
			}
			if len(args) == 2 {
				if _, _, ok := control.SplitCommand("meeting-" + args[0] + " " + args[1]); !ok {
					return fmt.Errorf("meeting %s takes no ID, or %q is not a meeting ID", args[0], args[1])
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IOStreams, o.Command = envOf(cmd).IOStreams, "meeting-"+strings.Join(args, " ")
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

package app

import (
	"fmt"
	"log"

	"github.com/harkapp/hark/app/control"
)

// startControl opens the data folder's control socket (app/control), for
// `hark dictate ...`. It is a convenience: when it can't open (a data
// folder path too long for a unix socket, say) the app runs without it
// and the log says why.
func startControl(dataDir string, run func(cmd string) control.Reply) *control.Server {
	s, err := control.Listen(dataDir, run)
	if err != nil {
		log.Printf("hark: no control socket, `hark dictate` will not reach this app: %v", err)
		return nil
	}
	return s
}

// ControlCommand runs one control command (app/control's, from the socket
// or a dictation URL). stop waits for the transcript; toggle returns at
// once (a stop finishes in the background).
func (a *App) ControlCommand(cmd string) control.Reply { return a.Dictation.command(cmd) }

// command runs one control command on the dictation.
func (d *Dictation) command(cmd string) control.Reply {
	if d.deps.life.closed() {
		return control.Reply{State: DictIdle, Error: errClosed.Error()}
	}
	var text string
	var err error
	switch cmd {
	case "start":
		err = d.Start()
	case "stop":
		_, text, err = d.stopInserted() // what was inserted, not the raw transcript
	case "toggle":
		err = d.Toggle()
	case "cancel":
		err = d.Cancel()
	case "paste-last":
		err = d.PasteLast()
	case "status":
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	st, _ := d.Status()
	r := control.Reply{State: st.State, Text: text}
	if cmd == "status" {
		r.Text = st.LastText
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

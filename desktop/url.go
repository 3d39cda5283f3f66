package desktop

import "github.com/harkapp/hark/app/control"

// openURL runs a dictation URL macOS handed the app (hark://dictate/toggle,
// from Shortcuts, Raycast, a Stream Deck): the same commands as `hark
// dictate`, errors shown in the window.
func (s *Shell) openURL(raw string) {
	cmd, err := control.ParseURL(raw)
	if err != nil {
		s.report(err)
		return
	}
	go func() { // stop waits for the transcript: not on Wails' URL queue
		if r := s.app.ControlCommand(cmd); r.Error != "" {
			s.emit("app:error", map[string]string{"error": r.Error})
		}
	}()
}

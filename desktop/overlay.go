package desktop

import (
	"github.com/harkapp/hark/app/overlay"
	"github.com/harkapp/hark/app/platform"
)

// attachOverlay shows the recording overlay (app/overlay) while dictating:
// on GTK's main loop on Linux and AppKit's on macOS, both run by Wails. A
// click stops the recording; Esc, grabbed only while recording, cancels.
func (s *Shell) attachOverlay() {
	opt := overlay.Options{
		OnStop:   func() { s.report(s.app.Dictation.Toggle()) },
		OnCancel: func() { s.report(s.app.Dictation.Cancel()) },
		Esc:      platform.NewHotkey(),
	}
	// Where it appears; "settings:changed" reaches it through overlayEvent.
	if st, err := s.app.Settings.Get(); err == nil {
		opt.Position = st.OverlayPosition
	}
	ov, err := overlay.New(opt, true)
	if err != nil {
		s.report(err)
		return
	}
	s.overlay.Store(ov)
}

// overlayEvent passes a service event to the overlay.
func (s *Shell) overlayEvent(name string, data any) {
	if ov := s.overlay.Load(); ov != nil {
		ov.Handle(name, data)
	}
}

// detachOverlay hides the overlay and gives Esc back on quit.
func (s *Shell) detachOverlay() {
	if ov := s.overlay.Swap(nil); ov != nil {
		ov.Close()
	}
}

// Package desktop is the desktop shell around the app's services: the
// Wails window (Run), the menu-bar item, the global hotkey and the other
// OS pieces (platform.go), kept in step with the services' events. It
// builds without Wails' build tags (tests); the window opens only in a
// binary built with them (main_desktop.go).
package desktop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/overlay"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/models"
)

// Shell is the window itself, for the UI (window.go.desktop.Shell) and the
// menu-bar item: it forwards service events to the page and decides
// whether closing the window hides it or quits.
type Shell struct {
	app      *app.App
	ctx      atomic.Pointer[context.Context]
	quitting atomic.Bool
	plat     platform.Platform
	rec      *app.CaptureRecorder
	trig     triggerState // trigger.go
	// pasteLast is the "paste the last transcript again" hotkey.
	pasteLast platform.Hotkey
	overlay   atomic.Pointer[overlay.Overlay] // overlay.go
	// Tray reports that the menu-bar item is shown (macOS): closing the
	// window then hides it instead of quitting.
	Tray      bool
	modeKey   platform.Binding // modes.go
	betterKey platform.Binding
	// send, when set, replaces the window as where events go (tests).
	send func(name string, data any)
}

// emit forwards a service event to the page; events before the window
// exists (or after it is gone) have no one to go to.
func (s *Shell) emit(name string, data any) {
	s.observe(name, data)
	if s.send != nil {
		s.send(name, data)
	} else if ctx := s.ctx.Load(); ctx != nil {
		runtime.EventsEmit(*ctx, name, data)
	}
}

func (s *Shell) startup(ctx context.Context) {
	s.ctx.Store(&ctx)
	// Not on this goroutine: on macOS the menu-bar item is made on the
	// main thread, which may be the one running startup.
	go s.attachPlatform(s.plat)
	// Files dropped anywhere on the window are transcribed; the page
	// shows them in the Files view.
	runtime.OnFileDrop(ctx, func(_, _ int, paths []string) {
		for _, p := range paths {
			if _, err := s.app.Files.Add(p, ""); err != nil {
				s.emit(EventFileError, FileProblem{Name: filepath.Base(p), Error: err.Error()})
			}
		}
		if len(paths) > 0 {
			s.emit(EventView, "files")
		}
	})
}

// ChooseFiles opens the OS's file dialog and queues the chosen files for
// transcription with model ("" = the settings'). Paths reach the app only
// this way and through drops: the page never names a file.
func (s *Shell) ChooseFiles(model string) error {
	ctx := s.ctx.Load()
	if ctx == nil {
		return errors.New("the window is not open")
	}
	paths, err := runtime.OpenMultipleFilesDialog(*ctx, runtime.OpenDialogOptions{
		Title:   "Transcribe files",
		Filters: []runtime.FileFilter{{DisplayName: "Audio and video", Pattern: dialogPattern(audio.Extensions())}},
	})
	if err != nil {
		return err
	}
	for _, p := range paths {
		if _, err := s.app.Files.Add(p, model); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
	}
	return nil
}

// ImportModel opens the OS's file dialog and imports the chosen model
// file; it returns the model's name ("" when the dialog was canceled).
func (s *Shell) ImportModel() (string, error) {
	ctx := s.ctx.Load()
	if ctx == nil {
		return "", errors.New("the window is not open")
	}
	p, err := runtime.OpenFileDialog(*ctx, runtime.OpenDialogOptions{
		Title:   "Import a model",
		Filters: []runtime.FileFilter{{DisplayName: "Whisper .bin or GGUF", Pattern: dialogPattern(models.Extensions)}},
	})
	if err != nil || p == "" {
		return "", err
	}
	return s.app.Files.Import(p)
}

// dialogPattern is a file dialog's filter for exts (".wav" ...):
// "*.wav;*.mp3". The lists are the ones the page's pickers get too
// (api.gen.ts), so a file offered in one is offered in the other.
func dialogPattern(exts []string) string {
	pats := make([]string, len(exts))
	for i, e := range exts {
		pats[i] = "*" + e
	}
	return strings.Join(pats, ";")
}

// beforeClose keeps the app alive in the menu bar when its item is shown:
// closing the window only hides it (a menu-bar app must not vanish).
func (s *Shell) beforeClose(ctx context.Context) bool {
	if s.quitting.Load() || !s.Tray {
		return false
	}
	st, err := s.app.Settings.Get()
	if err != nil || !st.ShowMenuBarIcon {
		return false
	}
	runtime.WindowHide(ctx)
	return true
}

// Quit ends the app cleanly (Ctrl/Cmd+Q, the menu-bar item's Quit): the
// services stop and save before the process exits.
func (s *Shell) Quit() {
	s.quitting.Store(true)
	if ctx := s.ctx.Load(); ctx != nil {
		runtime.Quit(*ctx)
	}
}

// Show brings the window back (menu-bar item, second launch).
func (s *Shell) Show() {
	if ctx := s.ctx.Load(); ctx != nil {
		runtime.WindowShow(*ctx)
		runtime.WindowUnminimise(*ctx)
	}
}

func (s *Shell) hide() {
	if ctx := s.ctx.Load(); ctx != nil {
		runtime.WindowHide(*ctx)
	}
}

// Platform reports the OS, for the page's shortcut hints.
func (s *Shell) Platform() string { return goruntime.GOOS }

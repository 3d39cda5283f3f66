//go:build desktop || bindings

package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	goruntime "runtime"
	"sync/atomic"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/mac"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/bridge"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/frontend"
	"github.com/harkapp/hark/internal/version"
)

// windowIcon is Hark's icon (rendered from build/icon/hark.svg by
// scripts/render-icons) for the Linux window and the macOS About panel.
//
//go:embed build/linux/icons/256.png
var windowIcon []byte

// runApp opens the window: the app services bound as window.go.app.*, the
// bridge answering /media and /api requests the embedded UI cannot, and
// the window's own Shell bound as window.go.main.Shell.
func runApp(stderr io.Writer) int {
	if generateBindings {
		return runBindings(stderr)
	}
	ui, err := frontend.Assets("")
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	sh := &Shell{}
	plat := platform.New()
	rec := app.NewCaptureRecorder(nil)
	defer rec.Close()
	a, err := app.New(app.Config{Emitter: app.EmitterFunc(sh.emit), Recorder: rec, Output: plat.Output})
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	defer a.Close()
	a.SetFocus(platform.NewFocus())         // dictation modes follow the focused app
	a.SetTextField(platform.NewTextField()) // "perfect later" swaps in place (macOS)
	sh.app = a
	sh.rec = rec
	b := bridge.New(bridge.Options{Assets: ui})
	if err := b.Attach(a); err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	defer b.Close()
	// The OS pieces (global hotkey, menu-bar item, Dock icon) attach once
	// the window's run loop runs (startup): AppKit objects are made on the
	// main thread, which Wails owns.
	sh.plat = plat
	defer sh.detachPlatform()

	err = wails.Run(&options.App{
		Title:     "Hark",
		Width:     1100,
		Height:    720,
		MinWidth:  760,
		MinHeight: 480,
		AssetServer: &assetserver.Options{
			Assets:  ui,
			Handler: b,
		},
		Bind:          append(a.Services(), sh),
		OnStartup:     sh.startup,
		OnBeforeClose: sh.beforeClose,
		OnShutdown:    func(context.Context) { sh.ctx.Store(nil) },
		DragAndDrop:   &options.DragAndDrop{EnableFileDrop: true},
		Menu:          appMenu(sh),
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               "app.hark.desktop",
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { sh.Show() },
		},
		Linux: &linux.Options{ProgramName: "hark", Icon: windowIcon},
		Mac: &mac.Options{
			About: &mac.AboutInfo{Title: "Hark", Message: "Local speech-to-text and chat\n\n" +
				version.Get(backends.Compiled()).String(), Icon: windowIcon},
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	return 0
}

// Shell is the window itself, for the UI (window.go.main.Shell) and the
// menu-bar item: it forwards service events to the page and decides
// whether closing the window hides it or quits.
type Shell struct {
	app      *app.App
	ctx      atomic.Pointer[context.Context]
	quitting atomic.Bool
	plat     platform.Platform
	rec      *app.CaptureRecorder
	trig     triggerState // main_trigger.go
	// Tray reports that the menu-bar item is shown (macOS): closing the
	// window then hides it instead of quitting.
	Tray      bool
	modeKey   platform.Binding // main_modes.go
	betterKey platform.Binding
}

// emit forwards a service event to the page; events before the window
// exists (or after it is gone) have no one to go to.
func (s *Shell) emit(name string, data any) {
	s.observe(name, data)
	if ctx := s.ctx.Load(); ctx != nil {
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
			if _, err := s.app.AddFile(p, ""); err != nil {
				s.emit("transcription:error", map[string]string{"name": filepath.Base(p), "error": err.Error()})
			}
		}
		if len(paths) > 0 {
			s.emit("app:view", "files")
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
		Filters: []runtime.FileFilter{{DisplayName: "Audio and video", Pattern: "*.wav;*.mp3;*.flac;*.ogg;*.m4a;*.mp4;*.mov;*.webm"}},
	})
	if err != nil {
		return err
	}
	for _, p := range paths {
		if _, err := s.app.AddFile(p, model); err != nil {
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
		Filters: []runtime.FileFilter{{DisplayName: "Whisper .bin or GGUF", Pattern: "*.bin;*.gguf"}},
	})
	if err != nil || p == "" {
		return "", err
	}
	return s.app.ImportFile(p)
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

// appMenu is macOS' application menu (Cmd+Q, and the Edit menu that
// WebKit needs for copy and paste). Other systems get no menu bar: the
// page handles Ctrl+1..6 and Ctrl+Q itself.
func appMenu(s *Shell) *menu.Menu {
	if goruntime.GOOS != "darwin" {
		return nil
	}
	m := menu.NewMenu()
	// Quit goes through Shell.Quit: with the menu-bar item shown a plain
	// close only hides the window.
	hark := m.AddSubmenu("Hark")
	// About opens Settings, whose About card shows the version, commit,
	// build date and backends (Wails' own About panel comes only with its
	// default app menu, whose Quit would bypass Shell.Quit).
	hark.AddText("About Hark", nil, func(*menu.CallbackData) { s.Show(); s.emit("app:view", "settings") })
	hark.AddSeparator()
	hark.AddText("Hide Hark", keys.CmdOrCtrl("h"), func(*menu.CallbackData) { s.hide() })
	hark.AddSeparator()
	hark.AddText("Quit Hark", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { s.Quit() })
	m.Append(menu.EditMenu())
	m.Append(menu.WindowMenu())
	return m
}

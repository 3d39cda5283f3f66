package desktop

import (
	"context"
	"fmt"
	"io"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/mac"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/bridge"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/drivers"
	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/frontend"
	"github.com/harkapp/hark/internal/version"
)

// Run opens the window: the app services bound as window.go.app.*, the
// bridge answering /media and /api requests the embedded UI cannot, and
// the window's own Shell bound as window.go.desktop.Shell. icon is Hark's
// (the Linux window, the macOS About panel); errors go to stderr; the
// result is the exit status.
func Run(icon []byte, stderr io.Writer) int {
	drivers.Register() // the GPU backends, before the app opens one
	ui, err := frontend.Assets("")
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	sh := &Shell{}
	plat := platform.New()
	rec := app.NewCaptureRecorder(nil)
	defer rec.Close()
	a, err := app.New(app.Config{Emitter: app.EmitterFunc(sh.emit), Recorder: rec, Output: plat.Output,
		MeetingCapture: platform.MeetingCapture()})
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
		Linux: &linux.Options{ProgramName: "hark", Icon: icon},
		Mac: &mac.Options{
			// hark://dictate/toggle and the like (CFBundleURLTypes from
			// wails.json): Wails installs the kAEGetURL handler itself.
			OnUrlOpen: sh.openURL,
			About: &mac.AboutInfo{Title: "Hark", Message: "Local speech-to-text and chat\n\n" +
				version.Get(backends.Here()).String(), Icon: icon},
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	return 0
}

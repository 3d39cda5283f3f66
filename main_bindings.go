//go:build bindings

package main

import (
	"fmt"
	"io"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"

	"github.com/harkapp/hark/app"
)

// generateBindings: `wails build` first builds and runs the binary with the
// bindings tag (and without desktop) to write frontend/wailsjs; that run
// must only describe the bound structs, never open the data folder.
const generateBindings = true

func runBindings(stderr io.Writer) int {
	err := wails.Run(&options.App{Bind: []any{
		&app.Settings{}, &app.History{}, &app.Transcription{}, &app.Chat{},
		&app.Models{}, &app.Server{}, &app.Dictation{}, &Shell{},
	}})
	if err != nil {
		fmt.Fprintln(stderr, "hark:", err)
		return 1
	}
	return 0
}

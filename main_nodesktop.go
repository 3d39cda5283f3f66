//go:build !desktop

package main

import (
	"fmt"
	"io"
)

// runApp explains how to get the window: Wails compiles the app only with
// its build tags, which `wails build` sets.
func runApp(stderr io.Writer) int {
	fmt.Fprintln(stderr, `hark: this binary was built without the desktop app (a plain "go build").
Build the app with "wails build -skipbindings" (see README.md), or use a subcommand; "hark --help" lists them.`)
	return 2
}

//go:build !desktop

package main

import (
	"fmt"
	"os"
)

// runApp explains how to get the window: Wails compiles the app only with
// its build tags, which `wails build` sets.
func runApp() int {
	fmt.Fprintln(os.Stderr, `hark: this binary was built without the desktop app (a plain "go build").
Build the app with "wails build" (see README.md), or use a subcommand; "hark --help" lists them.`)
	return 2
}

// Command hark is Hark's single binary: with a subcommand it is the CLI
// (transcribe, generate, chat, tokenize, inspect, bench, serve); with no
// arguments it opens the desktop app.
package main

import (
	"os"

	"github.com/harkapp/hark/cli"
)

func main() {
	if len(os.Args) == 1 {
		os.Exit(runApp(os.Stderr))
	}
	os.Exit(cli.Execute(os.Args[1:]))
}

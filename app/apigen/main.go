// Command apigen writes frontend/src/lib/api.gen.ts from the Go side: the
// TypeScript shape of every value the UI exchanges with the services, a
// typed client for every bound method (over api.ts's call, which goes to
// the Wails window or the HTTP bridge), and the event names with their
// payload types. The Go types are the contract; the TypeScript is never
// written by hand. TestGeneratedFilesUpToDate fails when the file is
// stale: run `go generate ./app/apigen`.
package main

//go:generate go run . -o ../../frontend/src/lib/api.gen.ts

import (
	"flag"
	"fmt"
	"os"

	"github.com/harkapp/hark/internal/shareddir"
)

func main() {
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "apigen: -o is required")
		os.Exit(2)
	}
	root, err := shareddir.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
	b, err := generate(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}

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
	"path/filepath"
)

func main() {
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "apigen: -o is required")
		os.Exit(2)
	}
	root, err := moduleRoot()
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

// moduleRoot is the nearest folder up from the working one with go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working folder")
		}
		dir = up
	}
}

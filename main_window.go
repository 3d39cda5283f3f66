//go:build desktop && !bindings

package main

import "io"

// generateBindings is false in the app itself (see main_bindings.go).
const generateBindings = false

func runBindings(io.Writer) int { return 0 }

//go:build !unix

package app

import "os"

// lockDataDir: no advisory file locks here; Hark's supported systems
// (macOS, Linux) are unix.
func lockDataDir(dir string) (*os.File, error) { return nil, nil }

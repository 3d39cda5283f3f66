//go:build !amd64

package cpu

import "testing"

// addPanelVersions: only the portable packPanelQ8Packed off amd64.
func addPanelVersions(*testing.T, map[string]func(*packed, int, []byte)) {}

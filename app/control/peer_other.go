//go:build unix && !linux && !darwin

package control

import "os"

// peerUID: no peer credentials on these systems (Hark supports Linux and
// macOS); the socket's 0600 mode is the only check.
func peerUID(int) (int, bool) { return os.Getuid(), true }

//go:build !unix

package control

import (
	"errors"
	"net"
)

// Hark's supported systems (macOS, Linux) are unix.
func listenOwnerOnly(string) (net.Listener, error) {
	return nil, errors.New("the control socket needs a unix system")
}

func sameUser(net.Conn) bool { return false }

func isRefused(error) bool { return false }

//go:build unix

package control

import (
	"errors"
	"net"
	"os"
	"syscall"
)

// listenOwnerOnly listens on a unix socket only its owner may connect to
// (mode 0600; peers are also checked by sameUser, which closes the moment
// between listen and chmod).
func listenOwnerOnly(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// sameUser reports whether the peer runs as this process's user.
func sameUser(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	uid, ok := -1, false
	if err := raw.Control(func(fd uintptr) { uid, ok = peerUID(int(fd)) }); err != nil || !ok {
		return false
	}
	return uid == os.Getuid()
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

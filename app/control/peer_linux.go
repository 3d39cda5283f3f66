package control

import "golang.org/x/sys/unix"

// peerUID is the connected peer's user id (SO_PEERCRED).
func peerUID(fd int) (int, bool) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, false
	}
	return int(cred.Uid), true
}

package control

import "golang.org/x/sys/unix"

// peerUID is the connected peer's user id (LOCAL_PEERCRED).
func peerUID(fd int) (int, bool) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, false
	}
	return int(cred.Uid), true
}

//go:build unix

package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the lock file in the data folder (a dictation control
// socket, when there is one, belongs beside it).
const lockName = "hark.lock"

// lockDataDir takes the data folder's exclusive lock, held until the
// returned file is closed (the OS drops it when the process dies). A
// second app or `hark ui` on the same folder is refused before it runs
// recovery, which would mark the first one's running items interrupted.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("app: data folder lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("app: another Hark is already using the data folder %s; quit it first (or use another --data-dir)", dir)
		}
		return nil, fmt.Errorf("app: data folder lock: %w", err)
	}
	return f, nil
}

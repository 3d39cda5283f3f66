package app

import (
	"fmt"
	"log"
	"os"
	"runtime"
)

// privateDir creates dir (and its parents) for the user's eyes only, and
// tightens an existing one that others may enter: a data folder made by
// an older version, or by hand, with mode 0755 would let every local user
// list and read the history and recordings. The change is logged.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users (mode %#o) and could not be made private: %w", dir, perm, err)
		}
		log.Printf("%s was open to other users (mode %#o): made it private (0700)", dir, perm)
	}
	return nil
}

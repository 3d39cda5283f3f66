package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CommandStatus says whether the `hark` command on PATH is this app's
// binary, and where it would be linked.
type CommandStatus struct {
	OnPath bool   `json:"onPath"` // `hark` on PATH resolves to this binary
	Path   string `json:"path"`   // that `hark`, or where InstallCommand would put it
	Error  string `json:"error,omitempty"`
}

// command finds the executable and the PATH (seams for tests).
type command struct {
	exe  func() (string, error)
	path func() string
	home func() (string, error)
}

var hostCommand = command{exe: os.Executable, path: func() string { return os.Getenv("PATH") }, home: os.UserHomeDir}

// CommandStatus reports the `hark` command (Settings > About).
func (*About) CommandStatus() CommandStatus { return hostCommand.status() }

// InstallCommand puts `hark` on PATH: a symlink to this app's binary (the
// same binary is the CLI) in the first folder on PATH the user can write,
// preferring /usr/local/bin, then ~/.local/bin and ~/bin. It only runs
// when the user presses the button; an existing `hark` that is not a link
// to this app is never replaced.
func (*About) InstallCommand() (CommandStatus, error) {
	st, err := hostCommand.install()
	if err != nil {
		st.Error = err.Error()
	}
	return st, err
}

func (c command) target() (string, error) {
	exe, err := c.exe()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

func (c command) status() CommandStatus {
	target, err := c.target()
	if err != nil {
		return CommandStatus{Error: err.Error()}
	}
	for _, dir := range filepath.SplitList(c.path()) {
		p := filepath.Join(dir, "hark")
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return CommandStatus{OnPath: r == target, Path: p}
		}
	}
	dir, err := c.linkDir()
	if err != nil {
		return CommandStatus{Error: err.Error()}
	}
	return CommandStatus{Path: filepath.Join(dir, "hark")}
}

// linkDir is the first of the preferred folders that is on PATH and
// writable.
func (c command) linkDir() (string, error) {
	onPath := map[string]bool{}
	for _, d := range filepath.SplitList(c.path()) {
		onPath[filepath.Clean(d)] = true
	}
	prefer := []string{"/usr/local/bin"}
	if home, err := c.home(); err == nil {
		prefer = append(prefer, filepath.Join(home, ".local", "bin"), filepath.Join(home, "bin"))
	}
	for _, d := range prefer {
		if onPath[d] && writable(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("none of %s is on PATH and writable: add one to PATH, or link %s yourself",
		strings.Join(prefer, ", "), "hark")
}

func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".hark-write-test-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

func (c command) install() (CommandStatus, error) {
	st := c.status()
	if st.Error != "" {
		return st, errors.New(st.Error)
	}
	if st.OnPath {
		return st, nil
	}
	target, err := c.target()
	if err != nil {
		return st, err
	}
	if _, err := os.Lstat(st.Path); err == nil {
		return st, fmt.Errorf("%s exists and is not this app's hark: not replaced", st.Path)
	}
	if err := os.Symlink(target, st.Path); err != nil {
		return st, err
	}
	return c.status(), nil
}

package platform

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// autostartName is the file under $XDG_CONFIG_HOME/autostart that desktop
// sessions following the XDG Autostart spec start at login.
const autostartName = "hark.desktop"

// xdgAutostart is the Linux LoginItem: an XDG autostart desktop entry,
// written only when the user opts in and removed when they opt out.
type xdgAutostart struct {
	env  func(string) string    // os.Getenv, replaceable in tests
	home func() (string, error) // os.UserHomeDir
	exe  func() (string, error) // os.Executable
}

func newLoginItem() LoginItem {
	return &xdgAutostart{env: os.Getenv, home: os.UserHomeDir, exe: os.Executable}
}

// path is $XDG_CONFIG_HOME/autostart/hark.desktop, with XDG_CONFIG_HOME
// defaulting to ~/.config; the spec says a relative value is ignored.
func (x *xdgAutostart) path() (string, error) {
	dir := x.env("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := x.home()
		if err != nil {
			return "", fmt.Errorf("login item: no home directory: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "autostart", autostartName), nil
}

// Enabled reports whether our entry exists and is not switched off by
// Hidden=true or X-GNOME-Autostart-enabled=false (which desktop settings
// panels write instead of deleting the file).
func (x *xdgAutostart) Enabled() (bool, error) {
	p, err := x.path()
	if err != nil {
		return false, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("login item: %w", err)
	}
	defer f.Close()
	inEntry := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inEntry = line == "[Desktop Entry]"
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !inEntry || !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if (key == "Hidden" && val == "true") || (key == "X-GNOME-Autostart-enabled" && val == "false") {
			return false, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("login item: %w", err)
	}
	return true, nil
}

// SetEnabled writes or removes the entry. The entry runs this executable.
func (x *xdgAutostart) SetEnabled(on bool) error {
	p, err := x.path()
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("login item: %w", err)
		}
		return nil
	}
	exe, err := x.exe()
	if err != nil {
		return fmt.Errorf("login item: cannot find the executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("login item: %w", err)
	}
	// Write then rename, so a crash never leaves a half entry behind.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(desktopEntry(exe)), 0o644); err != nil {
		return fmt.Errorf("login item: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("login item: %w", err)
	}
	return nil
}

// desktopEntry is the autostart file for exe.
func desktopEntry(exe string) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Hark\n" +
		"Comment=Local speech-to-text and chat\n" +
		"Exec=" + execArg(exe) + "\n" +
		"Terminal=false\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// execArg quotes one Exec argument per the Desktop Entry spec: an argument
// with reserved characters goes in double quotes with ", `, $ and \
// backslash-escaped; then, Exec being a string value, every backslash is
// doubled once more; a literal % is written %%.
func execArg(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if strings.ContainsAny(s, " \t\n\"'\\><~|&;$*?#()`") {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch r {
			case '"', '`', '$', '\\':
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
		s = b.String()
	}
	return strings.ReplaceAll(s, `\`, `\\`)
}

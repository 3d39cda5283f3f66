package platform

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func testItem(t *testing.T, xdg, home, exe string) *xdgAutostart {
	t.Helper()
	return &xdgAutostart{
		env: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return xdg
			}
			return ""
		},
		home: func() (string, error) { return home, nil },
		exe:  func() (string, error) { return exe, nil },
	}
}

func TestAutostartRoundTrip(t *testing.T) {
	cfg := t.TempDir()
	x := testItem(t, cfg, "/nonexistent-home", "/opt/hark/hark")

	on, err := x.Enabled()
	require.NoError(t, err)
	require.False(t, on, "off until the user opts in")

	require.NoError(t, x.SetEnabled(true))
	p := filepath.Join(cfg, "autostart", "hark.desktop")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "[Desktop Entry]\nType=Application\nName=Hark\nComment=Local speech-to-text and chat\n"+
		"Exec=/opt/hark/hark\nTerminal=false\nX-GNOME-Autostart-enabled=true\n", string(b))
	on, err = x.Enabled()
	require.NoError(t, err)
	require.True(t, on)
	_, err = os.Stat(p + ".tmp")
	require.True(t, errors.Is(err, os.ErrNotExist), "no temp file left behind")

	require.NoError(t, x.SetEnabled(true), "enabling twice is fine")
	require.NoError(t, x.SetEnabled(false))
	_, err = os.Stat(p)
	require.True(t, errors.Is(err, os.ErrNotExist))
	on, err = x.Enabled()
	require.NoError(t, err)
	require.False(t, on)
	require.NoError(t, x.SetEnabled(false), "disabling twice is fine")
}

func TestAutostartHomeFallback(t *testing.T) {
	home := t.TempDir()
	for _, xdg := range []string{"", "relative/dir"} { // the spec ignores relative values
		x := testItem(t, xdg, home, "/usr/bin/hark")
		require.NoError(t, x.SetEnabled(true))
		_, err := os.Stat(filepath.Join(home, ".config", "autostart", "hark.desktop"))
		require.NoError(t, err, "XDG_CONFIG_HOME=%q", xdg)
		require.NoError(t, x.SetEnabled(false))
	}
	_, err := os.Stat("relative")
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing written relative to the working directory")
}

func TestAutostartUserDisabledEntry(t *testing.T) {
	cfg := t.TempDir()
	x := testItem(t, cfg, "", "/usr/bin/hark")
	dir := filepath.Join(cfg, "autostart")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for content, want := range map[string]bool{
		"[Desktop Entry]\nExec=hark\nHidden=true\n":                                         false,
		"[Desktop Entry]\nExec=hark\nX-GNOME-Autostart-enabled=false\n":                     false,
		"[Desktop Entry]\nExec=hark\n":                                                      true,
		"[Desktop Entry]\nExec=hark\n[Desktop Action x]\nHidden=true\n":                     true, // other groups don't count
		"# comment\n[Desktop Entry]\nX-GNOME-Autostart-enabled = false\n":                   false,
		"[Desktop Entry]\nName=Hark\nX-GNOME-Autostart-enabled=true\nX-Other=Hidden=true\n": true,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "hark.desktop"), []byte(content), 0o644))
		on, err := x.Enabled()
		require.NoError(t, err)
		require.Equal(t, want, on, "%q", content)
	}
	// Enabling again replaces a user-disabled entry with an enabled one.
	require.NoError(t, x.SetEnabled(true))
	on, err := x.Enabled()
	require.NoError(t, err)
	require.True(t, on)
}

func TestAutostartErrors(t *testing.T) {
	x := &xdgAutostart{
		env:  func(string) string { return "" },
		home: func() (string, error) { return "", errors.New("no HOME") },
		exe:  func() (string, error) { return "/usr/bin/hark", nil },
	}
	_, err := x.Enabled()
	require.ErrorContains(t, err, "no home directory")
	require.ErrorContains(t, x.SetEnabled(true), "no home directory")

	y := testItem(t, t.TempDir(), "", "")
	y.exe = func() (string, error) { return "", errors.New("gone") }
	require.ErrorContains(t, y.SetEnabled(true), "cannot find the executable")

	// A file where the autostart directory should be.
	cfg := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "autostart"), nil, 0o644))
	z := testItem(t, cfg, "", "/usr/bin/hark")
	require.Error(t, z.SetEnabled(true))
}

func TestAutostartResolvesSymlinkedExecutable(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "hark-1.0")
	require.NoError(t, os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755))
	link := filepath.Join(dir, "hark")
	require.NoError(t, os.Symlink(real, link))
	cfg := t.TempDir()
	x := testItem(t, cfg, "", link)
	require.NoError(t, x.SetEnabled(true))
	b, err := os.ReadFile(filepath.Join(cfg, "autostart", "hark.desktop"))
	require.NoError(t, err)
	require.Contains(t, string(b), "\nExec="+real+"\n")
}

func TestExecArgQuoting(t *testing.T) {
	require.Equal(t, "/usr/bin/hark", execArg("/usr/bin/hark"))
	require.Equal(t, `"/home/me/My Apps/hark"`, execArg("/home/me/My Apps/hark"))
	// Inside quotes: \" \` \$ \\ ; then every backslash doubled for the
	// string value, so a quote becomes \\" in the file.
	require.Equal(t, `"/a b/\\"q\\"/\\$x/\\`+"`"+`/\\\\"`, execArg(`/a b/"q"/$x/`+"`"+`/\`))
	require.Equal(t, "/opt/100%%/hark", execArg("/opt/100%/hark"))
	require.Equal(t, `"/opt/50%% off/hark"`, execArg("/opt/50% off/hark"))

	x := newLoginItem()
	_, ok := x.(*xdgAutostart)
	require.True(t, ok)
}

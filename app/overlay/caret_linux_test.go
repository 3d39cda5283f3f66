//go:build linux && cgo

package overlay

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app"

	"github.com/harkapp/hark/internal/shared"
)

// nearCaret puts the overlay below the text cursor of a GTK app found
// through AT-SPI, on a private session and accessibility bus: a GTK 3
// window with a focused entry (testdata/caretapp.c) is typed into, and the
// panel must appear just below the caret, where GTK itself says it draws
// it, as the X server places the window. The bottom-centre setting is
// unchanged, and without a text cursor (the app gone) the panel falls
// back to the bottom centre and says so in the log once. (Part of
// TestOverlayUnderXvfb: the overlay's GTK loop lives on that test's X
// server.)
func nearCaret(t *testing.T) {
	for _, bin := range []string{"dbus-daemon", "gcc", "pkg-config", "xwininfo", "/usr/libexec/at-spi-bus-launcher"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: install the apt packages dbus-daemon, at-spi2-core, gcc, pkg-config, libgtk-3-dev and x11-utils", bin)
		}
	}
	sessionBus(t)
	caretApp := buildCaretApp(t)
	app1 := startCaretApp(t, caretApp)
	out, err := exec.Command("xdotool", "search", "--sync", "--onlyvisible", "--name", "^caretapp$", "windowfocus", "--sync").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("xdotool", "type", "--delay", "30", "Dear Ann, thanks").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cx, cy, ch := app1.caretAfter(t, len("Dear Ann, thanks"))
	t.Logf("GTK draws the caret at %d,%d, %d high", cx, cy, ch)

	logs := make(chan string, 10)
	ov, err := New(Options{Position: app.OverlayCaret, Logf: func(f string, a ...any) {
		t.Logf(f, a...)
		logs <- fmt.Sprintf(f, a...)
	}}, false)
	require.NoError(t, err)
	defer ov.Close()
	// A recording as it is once words stream: started a few seconds ago,
	// the microphone heard (the level), then the text.
	ov.Handle("dictation:state", app.DictationStatus{State: app.DictRecording, Mode: "Email", StartedAt: time.Now().Add(-4 * time.Second).UnixMilli()})
	ov.Handle("dictation:level", app.Level{RMS: 0.2, Peak: 0.5})
	ov.Handle("dictation:partial", app.PartialText{Committed: " and see you", Tentative: " on Monday"})
	x, y, w, h := panelAt(t, func(x, y, w, h int) bool { return y < 300 })
	t.Logf("panel %dx%d at %d,%d", w, h, x, y)
	require.InDelta(t, cx-12, x, 3, "the panel's text starts under the caret")
	require.GreaterOrEqual(t, y, cy+ch, "below the caret's line")
	require.LessOrEqual(t, y, cy+ch+12, "just below it")
	require.Empty(t, logs, "found the caret: nothing to say")
	require.Eventually(t, func() bool {
		text, _, _, _, _, _ := shown()
		return strings.Contains(text, Listening) && regexp.MustCompile(`0:(0[1-9]|[1-5]\d)`).MatchString(text) // from StartedAt (a loaded machine may take past 0:09)
	}, shared.Wait(t, 5*time.Second), 10*time.Millisecond, "the shot shows a recording that is listening, with its time")
	time.Sleep(400 * time.Millisecond) // let GTK paint
	screenshotAs(t, "overlay-caret.png", 40, 60, max(x+w, 500)-40, y+h-60)

	// The setting back at the bottom centre: as before.
	ov.Handle("dictation:canceled", nil)
	require.Eventually(t, func() bool { _, v, _, _, _, _ := shown(); return !v }, shared.Wait(t, 5*time.Second), 20*time.Millisecond)
	ov.Handle(app.EventSettingsChanged, app.SettingsData{OverlayPosition: app.OverlayBottom})
	ov.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
	x, y, w, _ = panelAt(t, func(x, y, w, h int) bool { return y > 300 })
	require.InDelta(t, 400, x+w/2, 2, "centred on the 800-pixel screen")
	require.Greater(t, y, 300, "in the bottom half")

	// No text cursor (the app has gone): the bottom centre, logged once.
	ov.Handle("dictation:canceled", nil)
	require.Eventually(t, func() bool { _, v, _, _, _, _ := shown(); return !v }, shared.Wait(t, 5*time.Second), 20*time.Millisecond)
	app1.stop(t)
	ov.Handle(app.EventSettingsChanged, app.SettingsData{OverlayPosition: app.OverlayCaret})
	for range 2 {
		ov.Handle("dictation:state", app.DictationStatus{State: app.DictRecording})
		x, y, w, _ = panelAt(t, func(x, y, w, h int) bool { return true })
		require.InDelta(t, 400, x+w/2, 2, "no caret: the bottom centre")
		require.Greater(t, y, 300)
		ov.Handle("dictation:canceled", nil)
		require.Eventually(t, func() bool { _, v, _, _, _, _ := shown(); return !v }, shared.Wait(t, 5*time.Second), 20*time.Millisecond)
	}
	require.Len(t, logs, 1, "said once")
	require.Contains(t, <-logs, "no text cursor")
}

// panelAt waits for the panel to show where ok says, and returns where the
// X server has its window (xwininfo), checked against GTK's own idea.
func panelAt(t *testing.T, ok func(x, y, w, h int) bool) (x, y, w, h int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var v bool
		_, v, x, y, w, h = shown()
		return v && ok(x, y, w, h)
	}, shared.Wait(t, 5*time.Second), 20*time.Millisecond, "the panel shows (last at %d,%d)", x, y)
	var xx, xy int
	require.Eventually(t, func() bool {
		out, err := exec.Command("xwininfo", "-name", "Hark dictation").CombinedOutput()
		if err != nil {
			return false
		}
		xx, xy = field(out, "Absolute upper-left X"), field(out, "Absolute upper-left Y")
		return xx == x && xy == y
	}, shared.Wait(t, 5*time.Second), 20*time.Millisecond, "X has the panel at %d,%d, GTK at %d,%d", xx, xy, x, y)
	return x, y, w, h
}

// field reads "  Name:  123" from xwininfo's output.
func field(out []byte, name string) int {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `:\s*(-?\d+)`).FindSubmatch(out)
	if m == nil {
		return -1 << 30
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// sessionBus starts a private D-Bus session bus for this test (t.Setenv):
// it starts at-spi-bus-launcher, and so the accessibility bus and
// registry, when asked for them. The bus and what it started stop with
// the test (one process group).
func sessionBus(t *testing.T) {
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
	t.Setenv("AT_SPI_BUS_ADDRESS", "")
}

// buildCaretApp compiles testdata/caretapp.c.
func buildCaretApp(t *testing.T) string {
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "gtk+-3.0").Output()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "caretapp")
	args := append([]string{"-o", bin, filepath.Join("testdata", "caretapp.c")}, strings.Fields(string(flags))...)
	out, err := exec.Command("gcc", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// caretApp is the running test app and the caret positions it prints.
type caretApp struct {
	cmd   *exec.Cmd
	lines chan string
}

func startCaretApp(t *testing.T, bin string) *caretApp {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NO_AT_BRIDGE=0", "GTK_A11Y=atspi")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	a := &caretApp{cmd: cmd, lines: make(chan string, 256)}
	t.Cleanup(func() { a.stop(t) })
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			a.lines <- s.Text()
		}
		close(a.lines)
	}()
	select {
	case l := <-a.lines:
		require.Equal(t, "ready", l)
	case <-time.After(shared.Wait(t, 15*time.Second)):
		t.Fatal("caretapp did not start")
	}
	return a
}

// caretAfter is where GTK draws the caret once n characters were typed.
func (a *caretApp) caretAfter(t *testing.T, n int) (x, y, h int) {
	deadline := time.After(shared.Wait(t, 15*time.Second))
	seen := 0
	for seen < n {
		select {
		case l, ok := <-a.lines:
			require.True(t, ok, "caretapp ended")
			if _, err := fmt.Sscanf(l, "caret %d %d %d", &x, &y, &h); err == nil {
				seen++
			}
		case <-deadline:
			t.Fatalf("caretapp reported the caret moving %d times, not %d", seen, n)
		}
	}
	return x, y, h
}

func (a *caretApp) stop(t *testing.T) {
	if a.cmd.ProcessState == nil {
		_ = a.cmd.Process.Kill()
		_ = a.cmd.Wait()
	}
}

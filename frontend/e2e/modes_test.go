//go:build linux && cgo

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/platform/x11test"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// TestBrowserModes edits a vocabulary and a per-app mode in the browser,
// dictates through the loopback microphone (PulseAudio null sink) while an
// X window of class "HarkTest" is the active one, and checks in History
// that the dictation used the mode and its prompt terms (modes.mjs). It
// writes settings-modes.png where TestBrowser writes its screenshots.
func TestBrowserModes(t *testing.T) {
	for _, bin := range []string{"xclip", "xdotool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: install the apt package %s", bin, bin)
		}
	}
	root := repoRoot(t)
	fe := filepath.Join(root, "frontend")
	prepareFrontend(t, fe)
	pa := pulsetest.Start(t)
	x11test.StartXvfb(t)
	activeWindow(t, "harktest\x00HarkTest\x00")

	models := t.TempDir()
	linkOrCopy(t, shared.Path(t, "whisper-kit", "models", kitModel), filepath.Join(models, kitModel))
	url, stop := startUI(t, models, t.TempDir(), filepath.Join(fe, "dist"))
	defer stop()

	shots := screenshotDir(t, root)
	tc := `{"clip":` + quote(shared.Path(t, "audio", "ljspeech-LJ001-0004.wav")) + `,"sink":` + quote(pa.Sink) + `}`
	_, err := browserScript(t, fe, "modes.mjs", append(pa.Env(), "HARK_URL="+url, "E2E_CASE="+tc, "E2E_SHOTS="+shots,
		"DISPLAY="+os.Getenv("DISPLAY")), scratchDir(t), "failure-modes.png")
	require.NoError(t, err, "browser test failed")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// activeWindow creates an X window with WM_CLASS class and publishes it as
// the root's _NET_ACTIVE_WINDOW, as a window manager would (Xvfb has none).
// The connection stays open for the test: Xvfb resets when its last
// client leaves.
func activeWindow(t *testing.T, class string) {
	c, err := xgb.NewConn()
	require.NoError(t, err)
	t.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	win, err := xproto.NewWindowId(c)
	require.NoError(t, err)
	require.NoError(t, xproto.CreateWindowChecked(c, scr.RootDepth, win, scr.Root, 0, 0, 10, 10, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, 0, nil).Check())
	require.NoError(t, xproto.ChangePropertyChecked(c, xproto.PropModeReplace, win, xproto.AtomWmClass, xproto.AtomString, 8,
		uint32(len(class)), []byte(class)).Check())
	a, err := xproto.InternAtom(c, false, uint16(len("_NET_ACTIVE_WINDOW")), "_NET_ACTIVE_WINDOW").Reply()
	require.NoError(t, err)
	v := make([]byte, 4)
	xgb.Put32(v, uint32(win))
	require.NoError(t, xproto.ChangePropertyChecked(c, xproto.PropModeReplace, scr.Root, a.Atom, xproto.AtomWindow, 32, 1, v).Check())
}

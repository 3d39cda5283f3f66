package platform

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/platform/x11test"

	"github.com/harkapp/hark/internal/shared"
)

// TestSecondHotkeyUnderXvfb: the paste-last hotkey (NewHotkey) and the
// dictation one are grabbed side by side, each firing only its own.
func TestSecondHotkeyUnderXvfb(t *testing.T) {
	needTools(t, "xdotool")
	x11test.StartXvfb(t)
	var dict, paste atomic.Int32
	h := New().Hotkey
	require.NoError(t, h.Register("Ctrl+Alt+H", func() { dict.Add(1) }, nil))
	defer h.Unregister()
	p := NewHotkey()
	require.NoError(t, p.Register("Ctrl+Alt+V", func() { paste.Add(1) }, nil))
	defer p.Unregister()
	xdo(t, "key", "ctrl+alt+v")
	require.Eventually(t, func() bool { return paste.Load() == 1 }, shared.Wait(t, 3*time.Second), 5*time.Millisecond)
	xdo(t, "key", "ctrl+alt+h")
	require.Eventually(t, func() bool { return dict.Load() == 1 }, shared.Wait(t, 3*time.Second), 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.EqualValues(t, 1, paste.Load())
}

package hotkey

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKnownCombos(t *testing.T) {
	for _, tc := range []struct {
		spec string
		key  uint32
		mods uint32
		str  string
	}{
		{"Option+Space", 0x31, ModOption, "Option+Space"},
		{"Cmd+Shift+D", 0x02, ModCmd | ModShift, "Shift+Cmd+D"},
		{"ctrl+alt+space", 0x31, ModControl | ModOption, "Ctrl+Option+Space"},
		{" Command + Option + V ", 0x09, ModCmd | ModOption, "Option+Cmd+V"},
		{"⌘⇧D", 0x02, ModCmd | ModShift, "Shift+Cmd+D"},
		{"⌃⌥Space", 0x31, ModControl | ModOption, "Ctrl+Option+Space"},
		{"F13", 0x69, 0, "F13"},
		{"f5", 0x60, 0, "F5"},
		{"Shift+F19", 0x50, ModShift, "Shift+F19"},
		{"Ctrl+0", 0x1D, ModControl, "Ctrl+0"},
		{"Ctrl+5", 0x17, ModControl, "Ctrl+5"},
		{"Ctrl+6", 0x16, ModControl, "Ctrl+6"},
		{"Cmd+`", 0x32, ModCmd, "Cmd+`"},
		{"Cmd+Backtick", 0x32, ModCmd, "Cmd+`"},
		{"Option+Return", 0x24, ModOption, "Option+Return"},
		{"Option+Enter", 0x24, ModOption, "Option+Return"},
		{"Ctrl+Esc", 0x35, ModControl, "Ctrl+Escape"},
		{"Cmd+Up", 0x7E, ModCmd, "Cmd+Up"},
		{"Super+M", 0x2E, ModCmd, "Cmd+M"},
		{"Cmd+/", 0x2C, ModCmd, "Cmd+/"},
		{`Cmd+\`, 0x2A, ModCmd, `Cmd+\`},
	} {
		c, err := Parse(tc.spec)
		require.NoError(t, err, tc.spec)
		require.Equal(t, tc.key, c.Key, tc.spec)
		require.Equal(t, tc.mods, c.Modifiers, tc.spec)
		require.Equal(t, tc.str, c.String(), tc.spec)
		// Canonical form round-trips.
		back, err := Parse(c.String())
		require.NoError(t, err)
		require.Equal(t, c, back)
	}
}

func TestParseCarbonMaskValues(t *testing.T) {
	// The values RegisterEventHotKey expects (Events.h): cmdKey 0x100,
	// shiftKey 0x200, optionKey 0x800, controlKey 0x1000.
	c, err := Parse("Ctrl+Option+Shift+Cmd+A")
	require.NoError(t, err)
	require.Equal(t, uint32(0x1B00), c.Modifiers)
	require.Equal(t, uint32(0), c.Key) // kVK_ANSI_A
}

func TestParseRejects(t *testing.T) {
	for spec, msg := range map[string]string{
		"":                 "empty",
		"   ":              "empty",
		"Space":            "needs Cmd, Option or Control",
		"Shift+A":          "needs Cmd, Option or Control",
		"Ctrl+Shift":       "no key",
		"Ctrl+Ctrl+A":      "twice",
		"Ctrl+Hyper+A":     "not a modifier",
		"Ctrl+A+B":         "not a modifier",
		"Ctrl+Banana":      "unknown key",
		"Ctrl++":           "empty part",
		"Cmd+":             "empty part",
		"Option+Space+Cmd": "not a modifier",
	} {
		_, err := Parse(spec)
		require.ErrorContains(t, err, msg, "spec %q", spec)
	}
}

func TestKeyTableHasNoCollisions(t *testing.T) {
	byCode := map[uint32]string{}
	for _, d := range keys {
		if prev, ok := byCode[d.code]; ok {
			require.Equal(t, prev, d.name, "code 0x%02X used by %s and %s", d.code, prev, d.name)
		}
		byCode[d.code] = d.name
	}
	// 26 letters, 10 digits, 20 function keys, 14 named keys, 11 punctuation.
	require.Len(t, byCode, 81)
}

func TestOptionOnly(t *testing.T) {
	for spec, want := range map[string]bool{
		"Option+Space":       true,
		"Option+Shift+Space": true,
		"Ctrl+Option+Space":  false,
		"Cmd+Space":          false,
		"F13":                false,
	} {
		c, err := Parse(spec)
		require.NoError(t, err)
		require.Equal(t, want, c.OptionOnly(), spec)
	}
}

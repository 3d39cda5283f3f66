package hotkey

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFourCC(t *testing.T) {
	// Values as printed in the HIToolbox headers' comments.
	require.Equal(t, uint32(0x6B657962), eventClassKeyboard)
	require.Equal(t, uint32(0x2D2D2D2D), paramDirectObject)
	require.Equal(t, uint32(0x686B6964), typeEventHotKeyID)
	require.Panics(t, func() { fourCC("abc") })
}

func TestRegisterError(t *testing.T) {
	opt, err := Parse("Option+Space")
	require.NoError(t, err)
	require.ErrorContains(t, registerError(opt, eventInternalErr), "macOS 15.0 and 15.1 do not allow Option")
	require.ErrorContains(t, registerError(opt, eventHotKeyExistsErr), "already taken by another app")

	ctrl, err := Parse("Ctrl+Option+Space")
	require.NoError(t, err)
	e := registerError(ctrl, eventInternalErr)
	require.NotContains(t, e.Error(), "macOS 15.0", "not an Option-only combo")
	require.ErrorContains(t, e, "Ctrl+Option+Space: RegisterEventHotKey failed (OSStatus -9868)")
}

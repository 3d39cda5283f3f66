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

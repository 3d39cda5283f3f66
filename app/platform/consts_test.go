package platform

import (
	"testing"

	"github.com/harkapp/hark/macos/paste"
	"github.com/harkapp/hark/macos/permissions"
	"github.com/stretchr/testify/require"
)

// The darwin adapters pass these strings through unchanged, so the macos
// packages must spell them exactly as the seam does.
func TestMacosPackagesShareTheSeamStrings(t *testing.T) {
	require.Equal(t, Granted, permissions.Granted)
	require.Equal(t, Denied, permissions.Denied)
	require.Equal(t, Undetermined, permissions.Undetermined)
	require.Equal(t, Unsupported, permissions.Unsupported)
	require.Equal(t, ModePaste, paste.ModePaste)
	require.Equal(t, ModeCopy, paste.ModeCopy)
	require.Equal(t, ModeType, paste.ModeType)
}

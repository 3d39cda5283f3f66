package audio

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Extensions is the table's: every format with a decoder is offered under
// each of its names, once, and what is refused is not.
func TestExtensionsListTheTable(t *testing.T) {
	exts := Extensions()
	seen := map[string]bool{}
	for _, e := range exts {
		require.True(t, strings.HasPrefix(e, ".") && e == strings.ToLower(e), e)
		require.False(t, seen[e], "%s listed twice", e)
		seen[e] = true
	}
	for _, k := range formats {
		for _, e := range k.exts {
			require.Equal(t, k.demuxer != "", seen[e], "%s (%s)", e, k.name)
		}
	}
	for _, e := range []string{".wav", ".mp3", ".flac", ".ogg", ".m4a", ".mp4", ".mov", ".webm"} {
		require.True(t, seen[e], e)
	}
	require.Empty(t, fmtPlaylist.exts, "a playlist is never offered")
}

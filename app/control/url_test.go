package control

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"hark://dictate/toggle": "toggle",
		"hark://dictate/start":  "start",
		"HARK://dictate/stop/":  "stop",
		"hark://dictate/cancel": "cancel",
	} {
		got, err := ParseURL(raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got, raw)
	}
	for _, bad := range []string{
		"", "hark://dictate/status", "hark://dictate/paste-last", "hark://dictate/", "hark://dictate/format", "https://dictate/toggle",
		"hark://other/toggle", "hark://u@dictate/toggle", "hark://dictate/toggle?x=1", "hark://dictate/toggle/again",
		"hark:dictate/toggle", "hark://dictate/" + strings.Repeat("a", 300), "hark://dictate/%zz",
	} {
		_, err := ParseURL(bad)
		require.Error(t, err, bad)
	}
}

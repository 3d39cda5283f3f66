package control

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// URLScheme is the scheme of dictation URLs (hark://dictate/toggle), which
// macOS hands the app for Shortcuts, Raycast, Stream Deck and the like
// (CFBundleURLTypes in build/darwin/Info.plist, from wails.json).
const URLScheme = "hark"

// ParseURL returns the command a dictation URL asks for. Any page or app
// may open a URL: only the dictation commands are accepted, nothing else
// of the URL is used, and status (which answers nothing to a URL) is
// refused.
func ParseURL(raw string) (string, error) {
	if len(raw) > 256 {
		return "", fmt.Errorf("control: URL too long")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("control: %w", err)
	}
	cmd := strings.Trim(u.Path, "/")
	if !strings.EqualFold(u.Scheme, URLScheme) || u.Host != "dictate" || u.User != nil || u.RawQuery != "" ||
		cmd == "status" || !slices.Contains(Commands, cmd) {
		return "", fmt.Errorf("control: %q is not a dictation URL (want %s://dictate/toggle, start, stop, cancel or paste-last)", raw, URLScheme)
	}
	return cmd, nil
}

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

// urlCommands are the commands a URL may give. Any page or app may open
// a URL: not status (a URL gets no answer) and not paste-last, which would
// paste the last transcript into whatever the opener has focused (a web
// page's own text field).
var urlCommands = []string{"start", "stop", "toggle", "cancel"}

// ParseURL returns the command a dictation URL asks for; nothing else of
// the URL is used.
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
		!slices.Contains(urlCommands, cmd) {
		return "", fmt.Errorf("control: %q is not a dictation URL (want %s://dictate/toggle, start, stop or cancel)", raw, URLScheme)
	}
	return cmd, nil
}

package cli

import (
	"strings"

	"github.com/harkapp/hark/app/control"
)

// urlArgs turns `hark hark://dictate/toggle` into `hark dictate toggle`:
// on Linux the desktop entry (build/linux/hark.desktop, Exec=hark %u)
// hands hark: links to the CLI, which passes them to the running app
// through its control socket, as macOS hands them to the app itself
// (desktop/url.go). Only the commands control.ParseURL allows pass.
func urlArgs(args []string) ([]string, error) {
	if len(args) != 1 || !strings.HasPrefix(strings.ToLower(args[0]), control.URLScheme+":") {
		return args, nil
	}
	cmd, err := control.ParseURL(args[0])
	if err != nil {
		return nil, err
	}
	return []string{"dictate", cmd}, nil
}

// Package version is Hark's own identity: the release version, the commit
// and the build date, stamped at build time by the linker
// (scripts/version-ldflags prints the flags: -X .../version.Version=...),
// with the commit and date falling back to what the Go toolchain records
// of the git checkout when a plain `go build` left them empty.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by -ldflags "-X github.com/harkapp/hark/internal/version.Version=1.2.3"
// (and Commit, Date). Version is the git tag without its "v", or "dev".
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info describes this binary.
type Info struct {
	Version  string   `json:"version"`
	Commit   string   `json:"commit"`
	Date     string   `json:"date"`
	Go       string   `json:"go"`
	Platform string   `json:"platform"`
	Backends []string `json:"backends"`
}

// Get returns the stamped identity; backends is the list of compiled-in
// inference backends (the caller knows them, this package does not
// import the engine).
func Get(backends []string) Info {
	in := Info{Version: Version, Commit: Commit, Date: Date, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Backends: backends}
	if in.Version == "" {
		in.Version = "dev"
	}
	if bi, ok := debug.ReadBuildInfo(); ok && (in.Commit == "" || in.Date == "") {
		modified, fromVCS := false, false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Commit == "" {
					in.Commit, fromVCS = s.Value, true
				}
			case "vcs.time":
				if in.Date == "" {
					in.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if fromVCS && len(in.Commit) > 12 {
			in.Commit = in.Commit[:12]
		}
		if fromVCS && modified {
			in.Commit += "-dirty"
		}
	}
	return in
}

// String is the one-line form `hark --version` prints, e.g.
// "hark 1.2.0 (commit 0123abcd4567, built 2026-11-24T10:00:00Z, go1.26.8 darwin/arm64, backends: cpu, metal)".
func (in Info) String() string {
	commit, date := in.Commit, in.Date
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	return fmt.Sprintf("hark %s (commit %s, built %s, %s %s, backends: %s)",
		in.Version, commit, date, in.Go, in.Platform, strings.Join(in.Backends, ", "))
}

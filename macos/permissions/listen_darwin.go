package permissions

import (
	"sync"

	"github.com/harkapp/hark/internal/ns"
)

var (
	listenOnce sync.Once
	listenErr  error
	// bool CGPreflightListenEventAccess(void); bool CGRequestListenEventAccess(void); (macOS 10.15+)
	cgPreflightListen func() bool
	cgRequestListen   func() bool
)

func loadListen() error {
	listenOnce.Do(func() {
		lib, err := ns.Framework("CoreGraphics")
		if err != nil {
			listenErr = err
			return
		}
		listenErr = ns.Funcs(
			ns.Sym{Lib: lib, Fn: &cgPreflightListen, Name: "CGPreflightListenEventAccess"},
			ns.Sym{Lib: lib, Fn: &cgRequestListen, Name: "CGRequestListenEventAccess"},
		)
	})
	return listenErr
}

// InputMonitoringStatus reports whether the app may watch input events
// meant for other apps (a listen-only event tap), without asking. Like
// Accessibility, macOS has no "not asked yet" answer here.
func InputMonitoringStatus() string {
	if loadListen() != nil {
		return Unsupported
	}
	return axStatus(cgPreflightListen())
}

// RequestInputMonitoring shows macOS's prompt the first time (it sends
// the user to System Settings) and returns the current status; a grant
// applies to event taps created after it.
func RequestInputMonitoring() (string, error) {
	if err := loadListen(); err != nil {
		return Unsupported, err
	}
	return axStatus(cgRequestListen()), nil
}

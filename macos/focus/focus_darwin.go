package focus

import (
	"errors"
	"sync"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
)

var (
	selSharedWorkspace      = objc.RegisterName("sharedWorkspace")      // +[NSWorkspace sharedWorkspace]
	selFrontmostApplication = objc.RegisterName("frontmostApplication") // -[NSWorkspace frontmostApplication] -> NSRunningApplication*
	selBundleIdentifier     = objc.RegisterName("bundleIdentifier")     // -[NSRunningApplication bundleIdentifier] -> NSString* (nil for bare executables)
	selLocalizedName        = objc.RegisterName("localizedName")        // -[NSRunningApplication localizedName] -> NSString*
	loadOnce                sync.Once
	loadErr                 error
)

func load() error {
	loadOnce.Do(func() { _, loadErr = ns.Framework("AppKit") })
	return loadErr
}

// Frontmost returns the bundle identifier of the frontmost application
// (its localized name when it has none). NSWorkspace may be read from
// any thread.
func Frontmost() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	cls, err := ns.Class("NSWorkspace")
	if err != nil {
		return "", err
	}
	var id string
	ns.WithPool(func() {
		app := cls.Send(selSharedWorkspace).Send(selFrontmostApplication)
		if app == 0 {
			return
		}
		if id = ns.GoString(app.Send(selBundleIdentifier)); id == "" {
			id = ns.GoString(app.Send(selLocalizedName))
		}
	})
	if id == "" {
		return "", errors.New("focus: no frontmost application")
	}
	return id, nil
}

package login

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
)

var (
	selMainAppService     = objc.RegisterName("mainAppService")               // +[SMAppService mainAppService] -> SMAppService* (class property, macOS 13+)
	selRegister           = objc.RegisterName("registerAndReturnError:")      // -[SMAppService registerAndReturnError:(NSError**)] -> BOOL
	selUnregister         = objc.RegisterName("unregisterAndReturnError:")    // -[SMAppService unregisterAndReturnError:(NSError**)] -> BOOL
	selStatus             = objc.RegisterName("status")                       // -[SMAppService status] -> SMAppServiceStatus (NSInteger)
	selOpenLoginItemsPane = objc.RegisterName("openSystemSettingsLoginItems") // +[SMAppService openSystemSettingsLoginItems]

	loadOnce sync.Once
	loadErr  error
)

func service() (objc.ID, objc.ID, error) {
	loadOnce.Do(func() {
		_, loadErr = ns.Framework("ServiceManagement")
	})
	if loadErr != nil {
		return 0, 0, loadErr
	}
	cls := objc.GetClass("SMAppService")
	if cls == 0 {
		return 0, 0, ErrUnsupported
	}
	return objc.ID(cls), objc.ID(cls).Send(selMainAppService), nil
}

// Current reads the main app's login-item status.
func Current() (Status, error) {
	var st Status
	var err error
	ns.WithPool(func() {
		var svc objc.ID
		if _, svc, err = service(); err != nil {
			return
		}
		st = Status(objc.Send[int](svc, selStatus))
	})
	return st, err
}

// IsEnabled reports whether the app opens at login.
func IsEnabled() (bool, error) {
	st, err := Current()
	return st == Enabled, err
}

// SetEnabled registers or unregisters the app as a login item. Call it only
// from the user's explicit choice in settings. ErrRequiresApproval means
// macOS wants the user to allow it in System Settings first.
func SetEnabled(on bool) error {
	var err error
	ns.WithPool(func() {
		var svc objc.ID
		if _, svc, err = service(); err != nil {
			return
		}
		cur := Status(objc.Send[int](svc, selStatus))
		sel := selRegister
		switch plan(cur, on) {
		case none:
			return
		case unregister:
			sel = selUnregister
		}
		var nserr objc.ID
		if !objc.Send[bool](svc, sel, &nserr) {
			verb := "enable"
			if !on {
				verb = "disable"
			}
			// Read the error inside the pool: it is autoreleased.
			cause := ns.NSError(nserr)
			if cause == nil {
				cause = errors.New("macOS gave no reason")
			}
			err = fmt.Errorf("login: could not %s launch at login: %w", verb, cause)
			return
		}
		err = result(Status(objc.Send[int](svc, selStatus)), on)
	})
	return err
}

// OpenSettings shows System Settings > General > Login Items.
func OpenSettings() error {
	var err error
	ns.WithPool(func() {
		var cls objc.ID
		if cls, _, err = service(); err != nil {
			return
		}
		cls.Send(selOpenLoginItemsPane)
	})
	return err
}

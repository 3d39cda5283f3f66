package platform

import (
	"fmt"
	"sync"

	"github.com/harkapp/hark/app/trigger"
	"github.com/harkapp/hark/macos/eventtap"
	"github.com/harkapp/hark/macos/permissions"
)

// darwinTrigger watches the key through a listen-only event tap
// (macos/eventtap), which needs the Input Monitoring permission.
type darwinTrigger struct {
	mu  sync.Mutex
	tap *eventtap.Tap
}

var darwinTriggerKeys = map[trigger.Key]eventtap.Key{
	trigger.RightAlt:   eventtap.RightOption,
	trigger.RightSuper: eventtap.RightCommand,
	trigger.RightCtrl:  eventtap.RightControl,
	trigger.RightShift: eventtap.RightShift,
	trigger.Fn:         eventtap.Fn,
	trigger.Mouse8:     eventtap.MouseBack,
	trigger.Mouse9:     eventtap.MouseForward,
}

// Watch implements TriggerSource. Without the permission it asks macOS
// (whose prompt sends the user to System Settings) and explains why;
// the shell keeps the Carbon hotkey working meanwhile.
func (d *darwinTrigger) Watch(key trigger.Key, feed func(trigger.Key, bool)) error {
	k, ok := darwinTriggerKeys[key]
	if !ok {
		return fmt.Errorf("trigger key %q cannot be watched on macOS", key)
	}
	if err := d.Close(); err != nil {
		return err
	}
	if permissions.InputMonitoringStatus() != permissions.Granted {
		if st, err := permissions.RequestInputMonitoring(); err != nil {
			return fmt.Errorf("trigger: %w", err)
		} else if st != permissions.Granted {
			return fmt.Errorf("%w: to notice %s pressed on its own, Hark needs Input Monitoring "+
				"(it watches for that key only; nothing you type is kept or sent). "+
				"Allow Hark in System Settings → Privacy & Security → Input Monitoring, then choose the trigger again",
				ErrTriggerPermission, key.Label(true))
		}
	}
	tap, err := eventtap.Start(k, func(r eventtap.Result) {
		switch r {
		case eventtap.KeyDown:
			feed(key, true)
		case eventtap.KeyUp:
			feed(key, false)
		case eventtap.OtherDown:
			feed("", true)
		}
	})
	if err != nil {
		return fmt.Errorf("trigger %s: %w", key.Label(true), err)
	}
	d.mu.Lock()
	d.tap = tap
	d.mu.Unlock()
	return nil
}

// Close implements TriggerSource.
func (d *darwinTrigger) Close() error {
	d.mu.Lock()
	tap := d.tap
	d.tap = nil
	d.mu.Unlock()
	if tap != nil {
		tap.Close()
	}
	return nil
}

package app

import (
	"fmt"

	"github.com/harkapp/hark/app/trigger"
)

// validateTrigger checks the trigger key, which is stored by its
// canonical name (the one the Settings view sends).
func (d SettingsData) validateTrigger() error {
	if d.Trigger == "" {
		return nil
	}
	k, err := trigger.ParseKey(d.Trigger)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if string(k) != d.Trigger {
		return fmt.Errorf("settings: trigger %q is not valid (use %q)", d.Trigger, k)
	}
	return nil
}

// TriggerConfig is the trigger machine's configuration from the
// settings: the key ("" = none, use the hotkey) and its mode.
func (d SettingsData) TriggerConfig() (trigger.Key, trigger.Config) {
	return trigger.Key(d.Trigger), trigger.Config{Mode: d.HotkeyMode, DoubleTap: d.TriggerDoubleTap}
}

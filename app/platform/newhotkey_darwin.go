package platform

// NewHotkey makes another global hotkey, beside Platform.Hotkey (the
// "paste the last transcript again" one); Carbon tells them apart by id.
func NewHotkey() Hotkey { return &darwinHotkey{} }

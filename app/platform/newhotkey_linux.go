package platform

// NewHotkey makes another global hotkey, beside Platform.Hotkey (the
// "paste the last transcript again" one); each grabs on its own X
// connection.
func NewHotkey() Hotkey { return newHotkey() }

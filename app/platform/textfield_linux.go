package platform

// NewTextField is nil on Linux: X11 has no portable way to read a text
// field, and blind keystrokes (select back, retype) could destroy text the
// user typed since, so a better transcript is offered instead.
func NewTextField() TextField { return nil }

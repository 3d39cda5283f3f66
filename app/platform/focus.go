package platform

// Focus reports the application that has the keyboard focus, as the
// identifier dictation modes match: the bundle identifier on macOS
// ("com.apple.mail"), the WM_CLASS class on X11 ("Thunderbird").
type Focus interface {
	FocusedApp() (string, error)
}

// Returner is implemented by an Output that can press Return in the
// focused app after inserting text (a mode's auto-Enter).
type Returner interface {
	PressReturn() error
}

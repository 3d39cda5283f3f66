// Package focus reports the macOS application that has the keyboard
// focus (the frontmost app), by its bundle identifier, through NSWorkspace
// over purego. Dictation modes are chosen by it.
package focus

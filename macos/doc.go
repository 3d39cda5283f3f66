// Package macos groups the darwin-only integration packages of the desktop
// app: main-thread dispatch, the menu-bar item, the global hotkey, pasting
// into the focused app, permissions, launch at login, and the system audio
// a meeting records (systemaudio, not yet run on a Mac).
//
// Every package here talks to the system through
// github.com/ebitengine/purego (and purego/objc): no cgo, and no import of
// Wails or malgo, so they build and vet with GOOS=darwin CGO_ENABLED=0 on any
// machine. The logic that can be tested anywhere (hotkey parsing, menu model,
// icons, status mapping) lives in platform-independent files next to the thin
// darwin files; those are compile-only where no Mac is available. The
// Foundation plumbing (frameworks, NSString, NSError, autorelease pools) is
// internal/ns, which the Metal backend (metal/) uses too.
//
// This package itself holds only a test that checks the app bundle's
// Info.plist and entitlements (build/darwin) render and parse the way the
// Wails v2 packager and the code signer will see them.
package macos

// Package panel is the recording overlay's macOS window (app/overlay): a
// borderless, non-activating NSPanel above other windows and on every
// Space, through purego (no cgo). It never becomes key, so the app being
// dictated into keeps the focus; a click on it calls back (stop).
package panel

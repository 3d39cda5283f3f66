// Package permissions reports and requests the macOS privacy permissions
// dictation needs: the microphone (AVCaptureDevice authorization) and
// Accessibility (AXIsProcessTrusted, required to post the synthesized
// Cmd-V), and opens the matching System Settings pane. Status mapping and
// pane URLs are platform independent (this file).
package permissions

import "fmt"

// Statuses, the same strings as app/platform's.
const (
	Granted      = "granted"
	Denied       = "denied"
	Undetermined = "undetermined"
	Unsupported  = "unsupported"
)

// Panes that Open accepts.
const (
	Microphone    = "microphone"
	Accessibility = "accessibility"
	// InputMonitoring lets a listen-only event tap see keys pressed in
	// other apps (the single-key trigger: Right Option, Fn).
	InputMonitoring = "inputmonitoring"
)

// AVAuthorizationStatus values (AVFoundation, macOS 10.14+).
const (
	avNotDetermined = 0
	avRestricted    = 1
	avDenied        = 2
	avAuthorized    = 3
)

// micStatus maps an AVAuthorizationStatus. Restricted (parental controls
// or an MDM profile) is reported as denied: the user cannot grant it
// either way, and the UI's advice is the same.
func micStatus(av int) string {
	switch av {
	case avNotDetermined:
		return Undetermined
	case avRestricted, avDenied:
		return Denied
	case avAuthorized:
		return Granted
	}
	return Unsupported
}

// axStatus maps AXIsProcessTrusted. macOS has no "not asked yet" state for
// Accessibility: an untrusted process is reported as denied.
func axStatus(trusted bool) string {
	if trusted {
		return Granted
	}
	return Denied
}

// SettingsURL is the System Settings deep link for a pane: the
// x-apple.systempreferences scheme with the Security & Privacy anchor,
// which macOS 13+ still routes to Privacy & Security.
func SettingsURL(which string) (string, error) {
	const base = "x-apple.systempreferences:com.apple.preference.security?"
	switch which {
	case Microphone:
		return base + "Privacy_Microphone", nil
	case Accessibility:
		return base + "Privacy_Accessibility", nil
	case InputMonitoring:
		return base + "Privacy_ListenEvent", nil
	}
	return "", fmt.Errorf("permissions: unknown pane %q (want %q, %q or %q)", which, Microphone, Accessibility, InputMonitoring)
}

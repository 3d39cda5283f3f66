package permissions

import (
	"errors"
	"sync"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
)

var (
	selAuthorizationStatus = objc.RegisterName("authorizationStatusForMediaType:")             // +[AVCaptureDevice authorizationStatusForMediaType:(AVMediaType)] -> AVAuthorizationStatus (NSInteger)
	selRequestAccess       = objc.RegisterName("requestAccessForMediaType:completionHandler:") // +[AVCaptureDevice requestAccessForMediaType:(AVMediaType) completionHandler:(void (^)(BOOL granted))]
	selSharedWorkspace     = objc.RegisterName("sharedWorkspace")                              // +[NSWorkspace sharedWorkspace]
	selOpenURL             = objc.RegisterName("openURL:")                                     // -[NSWorkspace openURL:(NSURL*)] -> BOOL
	selURLWithString       = objc.RegisterName("URLWithString:")                               // +[NSURL URLWithString:(NSString*)] -> NSURL* (nil if malformed)
)

var (
	avOnce     sync.Once
	avErr      error
	mediaAudio objc.ID // AVMediaTypeAudio: extern AVMediaType const (an NSString)

	axOnce       sync.Once
	axErr        error
	axTrusted    func() bool                // Boolean AXIsProcessTrusted(void);
	axTrustedOpt func(options objc.ID) bool // Boolean AXIsProcessTrustedWithOptions(CFDictionaryRef options);
	axPromptKey  objc.ID                    // kAXTrustedCheckOptionPrompt: extern CFStringRef const
)

func loadAV() error {
	avOnce.Do(func() {
		lib, err := ns.Framework("AVFoundation")
		if err != nil {
			avErr = err
			return
		}
		mediaAudio, avErr = ns.Global(lib, "AVMediaTypeAudio")
	})
	return avErr
}

func loadAX() error {
	axOnce.Do(func() {
		// AX* live in HIServices, re-exported by ApplicationServices.
		lib, err := ns.Framework("ApplicationServices")
		if err != nil {
			axErr = err
			return
		}
		if axErr = ns.Funcs(
			ns.Sym{Lib: lib, Fn: &axTrusted, Name: "AXIsProcessTrusted"},
			ns.Sym{Lib: lib, Fn: &axTrustedOpt, Name: "AXIsProcessTrustedWithOptions"},
		); axErr != nil {
			return
		}
		axPromptKey, axErr = ns.Global(lib, "kAXTrustedCheckOptionPrompt")
	})
	return axErr
}

// MicrophoneStatus reports the microphone authorization without asking.
func MicrophoneStatus() string {
	if loadAV() != nil {
		return Unsupported
	}
	cls, err := ns.Class("AVCaptureDevice")
	if err != nil {
		return Unsupported
	}
	return micStatus(objc.Send[int](cls, selAuthorizationStatus, mediaAudio))
}

// RequestMicrophone shows the system prompt when the status is
// undetermined (macOS asks only once; later calls report the stored
// answer) and calls done with the result on an arbitrary goroutine. The
// prompt text is Info.plist's NSMicrophoneUsageDescription, without which
// macOS terminates the app.
func RequestMicrophone(done func(granted bool)) error {
	if err := loadAV(); err != nil {
		return err
	}
	cls, err := ns.Class("AVCaptureDevice")
	if err != nil {
		return err
	}
	block := objc.NewBlock(func(_ objc.Block, granted bool) {
		if done != nil {
			go done(granted)
		}
	})
	ns.WithPool(func() { cls.Send(selRequestAccess, mediaAudio, block) })
	// AVFoundation copied the block; drop our reference.
	block.Release()
	return nil
}

// AccessibilityStatus reports whether the app may post key events to
// other apps, without prompting.
func AccessibilityStatus() string {
	if loadAX() != nil {
		return Unsupported
	}
	return axStatus(axTrusted())
}

// PromptAccessibility asks macOS to show its "wants to control this
// computer" alert if the app is not yet trusted (the alert appears
// asynchronously) and returns the current status.
func PromptAccessibility() (string, error) {
	if err := loadAX(); err != nil {
		return Unsupported, err
	}
	var trusted bool
	ns.WithPool(func() {
		// NSDictionary and NSNumber are toll-free bridged to CFDictionaryRef
		// and CFBooleanRef.
		trusted = axTrustedOpt(ns.Dict(axPromptKey, ns.Bool(true)))
	})
	return axStatus(trusted), nil
}

// Open shows the Privacy & Security pane for "microphone" or
// "accessibility" in System Settings.
func Open(which string) error {
	u, err := SettingsURL(which)
	if err != nil {
		return err
	}
	if _, err := ns.Framework("AppKit"); err != nil {
		return err
	}
	var ok bool
	ns.WithPool(func() {
		url := objc.ID(objc.GetClass("NSURL")).Send(selURLWithString, ns.String(u))
		if url == 0 {
			return
		}
		ws := objc.ID(objc.GetClass("NSWorkspace")).Send(selSharedWorkspace)
		ok = objc.Send[bool](ws, selOpenURL, url)
	})
	if !ok {
		return errors.New("permissions: System Settings could not be opened at " + u)
	}
	return nil
}

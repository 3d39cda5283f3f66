package panel

import (
	"errors"
	"structs"
	"sync"

	"github.com/ebitengine/purego/objc"

	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/internal/place"
	"github.com/harkapp/hark/macos/mainthread"
)

// Selectors, with the Apple signature each call relies on.
var (
	selAlloc                 = objc.RegisterName("alloc")
	selInit                  = objc.RegisterName("init")
	selInitWithContentRect   = objc.RegisterName("initWithContentRect:styleMask:backing:defer:") // -[NSWindow initWithContentRect:(NSRect) styleMask:(NSWindowStyleMask) backing:(NSBackingStoreType) defer:(BOOL)]
	selSetLevel              = objc.RegisterName("setLevel:")                                    // -[NSWindow setLevel:(NSWindowLevel)]
	selSetCollection         = objc.RegisterName("setCollectionBehavior:")                       // -[NSWindow setCollectionBehavior:(NSWindowCollectionBehavior)]
	selSetHidesOnDeactivate  = objc.RegisterName("setHidesOnDeactivate:")                        // -[NSWindow setHidesOnDeactivate:(BOOL)]
	selSetOpaque             = objc.RegisterName("setOpaque:")                                   // -[NSWindow setOpaque:(BOOL)]
	selSetHasShadow          = objc.RegisterName("setHasShadow:")                                // -[NSWindow setHasShadow:(BOOL)]
	selSetBackgroundColor    = objc.RegisterName("setBackgroundColor:")                          // -[NSWindow setBackgroundColor:(NSColor*)]
	selSetAlphaValue         = objc.RegisterName("setAlphaValue:")                               // -[NSWindow setAlphaValue:(CGFloat)]
	selSetFrameDisplay       = objc.RegisterName("setFrame:display:")                            // -[NSWindow setFrame:(NSRect) display:(BOOL)]
	selOrderFrontRegardless  = objc.RegisterName("orderFrontRegardless")                         // -[NSWindow orderFrontRegardless]
	selOrderOut              = objc.RegisterName("orderOut:")                                    // -[NSWindow orderOut:(id)]
	selContentView           = objc.RegisterName("contentView")                                  // -[NSWindow contentView] -> NSView*
	selSetReleasedWhenClosed = objc.RegisterName("setReleasedWhenClosed:")                       // -[NSWindow setReleasedWhenClosed:(BOOL)]
	selAddSubview            = objc.RegisterName("addSubview:")                                  // -[NSView addSubview:(NSView*)]
	selLabelWithString       = objc.RegisterName("labelWithString:")                             // +[NSTextField labelWithString:(NSString*)] (10.12+)
	selWrappingLabel         = objc.RegisterName("wrappingLabelWithString:")                     // +[NSTextField wrappingLabelWithString:(NSString*)] (10.12+)
	selSetStringValue        = objc.RegisterName("setStringValue:")                              // -[NSControl setStringValue:(NSString*)]
	selSetAttributedString   = objc.RegisterName("setAttributedStringValue:")                    // -[NSControl setAttributedStringValue:(NSAttributedString*)]
	selSetTextColor          = objc.RegisterName("setTextColor:")                                // -[NSTextField setTextColor:(NSColor*)]
	selSetDoubleValue        = objc.RegisterName("setDoubleValue:")                              // -[NSControl setDoubleValue:(double)]
	selSetMinValue           = objc.RegisterName("setMinValue:")                                 // -[NSLevelIndicator setMinValue:(double)]
	selSetMaxValue           = objc.RegisterName("setMaxValue:")                                 // -[NSLevelIndicator setMaxValue:(double)]
	selSetLevelStyle         = objc.RegisterName("setLevelIndicatorStyle:")                      // -[NSLevelIndicator setLevelIndicatorStyle:(NSLevelIndicatorStyle)]
	selSetFrame              = objc.RegisterName("setFrame:")                                    // -[NSView setFrame:(NSRect)]
	selColorWithWhite        = objc.RegisterName("colorWithWhite:alpha:")                        // +[NSColor colorWithWhite:(CGFloat) alpha:(CGFloat)]
	selMainScreen            = objc.RegisterName("mainScreen")                                   // +[NSScreen mainScreen] (the screen with the key window)
	selVisibleFrame          = objc.RegisterName("visibleFrame")                                 // -[NSScreen visibleFrame] -> NSRect
	selScreens               = objc.RegisterName("screens")                                      // +[NSScreen screens] -> NSArray* (the primary first)
	selFrame                 = objc.RegisterName("frame")                                        // -[NSScreen frame] -> NSRect
	selInitWithStringAttrs   = objc.RegisterName("initWithString:attributes:")                   // -[NSAttributedString initWithString:(NSString*) attributes:(NSDictionary*)]
	selAppend                = objc.RegisterName("appendAttributedString:")                      // -[NSMutableAttributedString appendAttributedString:(NSAttributedString*)]
	selMouseDown             = objc.RegisterName("mouseDown:")                                   // -[NSResponder mouseDown:(NSEvent*)]
	selCanBecomeKey          = objc.RegisterName("canBecomeKeyWindow")                           // -[NSWindow canBecomeKeyWindow] -> BOOL
	selCanBecomeMain         = objc.RegisterName("canBecomeMainWindow")                          // -[NSWindow canBecomeMainWindow] -> BOOL
)

// AppKit constants.
const (
	styleBorderless         = 0
	styleNonactivatingPanel = 1 << 7
	backingBuffered         = 2
	statusWindowLevel       = 25     // NSStatusWindowLevel: above normal and floating windows
	joinAllSpaces           = 1 << 0 // NSWindowCollectionBehaviorCanJoinAllSpaces
	stationary              = 1 << 4 // NSWindowCollectionBehaviorStationary
	fullScreenAuxiliary     = 1 << 8 // NSWindowCollectionBehaviorFullScreenAuxiliary
	levelContinuous         = 1      // NSLevelIndicatorStyleContinuousCapacity
	width, height           = 460.0, 96.0
	margin                  = 12.0
)

// nsRect is NSRect/CGRect: origin and size, CGFloat each.
type nsRect struct {
	_                   structs.HostLayout
	X, Y, Width, Height float64
}

// Frame is what the panel shows.
type Frame struct {
	Visible              bool
	Opacity, Level       float64
	Header               string
	Committed, Tentative string // the tentative tail is dimmed
	// Caret is the text cursor to show the panel below, in Accessibility's
	// coordinates (top-left origin, y down); nil: the bottom centre of
	// the active screen.
	Caret *place.Rect
}

// Panel is the overlay window. Its methods may be called from any
// goroutine: AppKit work goes to the main thread.
type Panel struct {
	onClick func()

	mu                       sync.Mutex
	win, header, level, text objc.ID

	// The main thread's own (apply): what the panel shows now. The text
	// is set again only when it changes, and the panel placed only when
	// it appears or its caret moves (not at each level event, and at the
	// bottom centre it does not follow the active screen mid-recording).
	shown    bool
	lastText string // Committed + "\x00" + Tentative last set
	hasText  bool
	caret    place.Rect
	hasCaret bool
}

var (
	classOnce sync.Once
	class     objc.Class
	classErr  error
	panelsMu  sync.Mutex
	panels    = map[objc.ID]*Panel{}
	fgKey     objc.ID // NSForegroundColorAttributeName
)

// registerClass makes HarkOverlayPanel: an NSPanel that never becomes key
// or main (the focus stays in the app being dictated into) and reports
// clicks.
func registerClass() error {
	classOnce.Do(func() {
		lib, err := ns.Framework("AppKit")
		if err != nil {
			classErr = err
			return
		}
		if fgKey, err = ns.Global(lib, "NSForegroundColorAttributeName"); err != nil {
			classErr = err
			return
		}
		class, classErr = objc.RegisterClass("HarkOverlayPanel", objc.GetClass("NSPanel"), nil, nil, []objc.MethodDef{
			{Cmd: selMouseDown, Fn: func(self objc.ID, _ objc.SEL, _ objc.ID) {
				panelsMu.Lock()
				p := panels[self]
				panelsMu.Unlock()
				if p != nil && p.onClick != nil {
					go p.onClick()
				}
			}},
			{Cmd: selCanBecomeKey, Fn: func(objc.ID, objc.SEL) bool { return false }},
			{Cmd: selCanBecomeMain, Fn: func(objc.ID, objc.SEL) bool { return false }},
		})
	})
	return classErr
}

// New makes the panel (hidden); onClick runs on its own goroutine.
func New(onClick func()) (*Panel, error) {
	if err := registerClass(); err != nil {
		return nil, err
	}
	p := &Panel{onClick: onClick}
	var err error
	if e := mainthread.Sync(func() { err = p.create() }); e != nil {
		return nil, e
	}
	return p, err
}

// create runs on the main thread.
func (p *Panel) create() error {
	var err error
	ns.WithPool(func() {
		win := objc.ID(class).Send(selAlloc).Send(selInitWithContentRect, nsRect{Width: width, Height: height},
			uint(styleBorderless|styleNonactivatingPanel), uint(backingBuffered), false)
		if win == 0 {
			err = errors.New("panel: could not create the overlay window")
			return
		}
		win.Send(selSetReleasedWhenClosed, false)
		win.Send(selSetLevel, statusWindowLevel)
		win.Send(selSetCollection, uint(joinAllSpaces|stationary|fullScreenAuxiliary))
		win.Send(selSetHidesOnDeactivate, false)
		win.Send(selSetOpaque, false)
		win.Send(selSetHasShadow, true)
		color := objc.ID(objc.GetClass("NSColor"))
		win.Send(selSetBackgroundColor, color.Send(selColorWithWhite, 0.12, 0.92))
		view := win.Send(selContentView)

		label := objc.ID(objc.GetClass("NSTextField"))
		header := ns.Retain(label.Send(selLabelWithString, ns.String("")))
		header.Send(selSetTextColor, color.Send(selColorWithWhite, 0.65, 1.0))
		header.Send(selSetFrame, nsRect{X: margin, Y: height - margin - 18, Width: width - 2*margin, Height: 18})
		level := ns.Retain(objc.ID(objc.GetClass("NSLevelIndicator")).Send(selAlloc).Send(selInit))
		level.Send(selSetLevelStyle, uint(levelContinuous))
		level.Send(selSetMinValue, 0.0)
		level.Send(selSetMaxValue, 1.0)
		level.Send(selSetFrame, nsRect{X: margin, Y: height - margin - 32, Width: width - 2*margin, Height: 8})
		text := ns.Retain(label.Send(selWrappingLabel, ns.String("")))
		text.Send(selSetFrame, nsRect{X: margin, Y: margin, Width: width - 2*margin, Height: height - 2*margin - 36})
		for _, v := range []objc.ID{header, level, text} {
			view.Send(selAddSubview, v)
		}
		panelsMu.Lock()
		panels[win] = p
		panelsMu.Unlock()
		p.mu.Lock()
		p.win, p.header, p.level, p.text = win, header, level, text
		p.mu.Unlock()
	})
	return err
}

// Show mirrors f into the panel, below the caret or at the bottom centre
// of the active screen.
func (p *Panel) Show(f Frame) {
	// Async: the dictation events must not wait for the main thread.
	_ = mainthread.Async(func() {
		ns.WithPool(func() { p.apply(f) })
	})
}

// apply runs on the main thread, inside a pool.
func (p *Panel) apply(f Frame) {
	p.mu.Lock()
	win, header, level, text := p.win, p.header, p.level, p.text
	p.mu.Unlock()
	if win == 0 {
		return
	}
	if !f.Visible {
		win.Send(selOrderOut, objc.ID(0))
		p.shown = false
		return
	}
	header.Send(selSetStringValue, ns.String(f.Header))
	level.Send(selSetDoubleValue, f.Level)
	if t := f.Committed + "\x00" + f.Tentative; !p.hasText || t != p.lastText {
		p.setText(text, f)
		p.lastText, p.hasText = t, true
	}
	moved := (f.Caret != nil) != p.hasCaret || (f.Caret != nil && *f.Caret != p.caret)
	if !p.shown || moved {
		if r, ok := frameFor(f.Caret); ok {
			win.Send(selSetFrameDisplay, r, true)
		}
		p.hasCaret, p.caret = f.Caret != nil, place.Rect{}
		if f.Caret != nil {
			p.caret = *f.Caret
		}
	}
	win.Send(selSetAlphaValue, f.Opacity)
	win.Send(selOrderFrontRegardless)
	p.shown = true
}

// setText sets the text view's string: the committed text, then the
// tentative tail dimmed. On the main thread, inside a pool.
func (p *Panel) setText(text objc.ID, f Frame) {
	color := objc.ID(objc.GetClass("NSColor"))
	s := objc.ID(objc.GetClass("NSMutableAttributedString")).Send(selAlloc).Send(selInitWithStringAttrs,
		ns.String(f.Committed), ns.Dict(fgKey, color.Send(selColorWithWhite, 0.96, 1.0)))
	if f.Tentative != "" {
		tail := objc.ID(objc.GetClass("NSAttributedString")).Send(selAlloc).Send(selInitWithStringAttrs,
			ns.String(f.Tentative), ns.Dict(fgKey, color.Send(selColorWithWhite, 0.96, 0.5)))
		s.Send(selAppend, tail)
		ns.Release(tail)
	}
	text.Send(selSetAttributedString, s)
	ns.Release(s)
}

// Close hides the panel for good.
func (p *Panel) Close() {
	p.Show(Frame{})
}

package menubar

import (
	"errors"
	"structs"
	"sync"

	"github.com/ebitengine/purego/objc"
	"github.com/harkapp/hark/internal/ns"
	"github.com/harkapp/hark/macos/mainthread"
)

// Selectors, with the Apple signature each call relies on.
var (
	selSharedApplication    = objc.RegisterName("sharedApplication")                   // +[NSApplication sharedApplication]
	selSetActivationPolicy  = objc.RegisterName("setActivationPolicy:")                // -[NSApplication setActivationPolicy:(NSApplicationActivationPolicy)] -> BOOL
	selSystemStatusBar      = objc.RegisterName("systemStatusBar")                     // +[NSStatusBar systemStatusBar]
	selStatusItemWithLength = objc.RegisterName("statusItemWithLength:")               // -[NSStatusBar statusItemWithLength:(CGFloat)] -> NSStatusItem*
	selRemoveStatusItem     = objc.RegisterName("removeStatusItem:")                   // -[NSStatusBar removeStatusItem:(NSStatusItem*)]
	selButton               = objc.RegisterName("button")                              // -[NSStatusItem button] -> NSStatusBarButton* (10.10+)
	selSetMenu              = objc.RegisterName("setMenu:")                            // -[NSStatusItem setMenu:(NSMenu*)]
	selSetImage             = objc.RegisterName("setImage:")                           // -[NSButton setImage:(NSImage*)]
	selSetToolTip           = objc.RegisterName("setToolTip:")                         // -[NSView setToolTip:(NSString*)]
	selInitWithData         = objc.RegisterName("initWithData:")                       // -[NSImage initWithData:(NSData*)]
	selSetTemplate          = objc.RegisterName("setTemplate:")                        // -[NSImage setTemplate:(BOOL)]
	selSetSize              = objc.RegisterName("setSize:")                            // -[NSImage setSize:(NSSize)]
	selInitWithTitle        = objc.RegisterName("initWithTitle:")                      // -[NSMenu initWithTitle:(NSString*)]
	selSetAutoenablesItems  = objc.RegisterName("setAutoenablesItems:")                // -[NSMenu setAutoenablesItems:(BOOL)]
	selAddItem              = objc.RegisterName("addItem:")                            // -[NSMenu addItem:(NSMenuItem*)]
	selInitWithTitleAction  = objc.RegisterName("initWithTitle:action:keyEquivalent:") // -[NSMenuItem initWithTitle:(NSString*) action:(SEL) keyEquivalent:(NSString*)]
	selSeparatorItem        = objc.RegisterName("separatorItem")                       // +[NSMenuItem separatorItem]
	selSetTarget            = objc.RegisterName("setTarget:")                          // -[NSMenuItem setTarget:(id)]
	selSetTag               = objc.RegisterName("setTag:")                             // -[NSMenuItem setTag:(NSInteger)]
	selTag                  = objc.RegisterName("tag")                                 // -[NSMenuItem tag] -> NSInteger
	selSetEnabled           = objc.RegisterName("setEnabled:")                         // -[NSMenuItem setEnabled:(BOOL)]
	selSetSubmenu           = objc.RegisterName("setSubmenu:")                         // -[NSMenuItem setSubmenu:(NSMenu*)]
	selSetState             = objc.RegisterName("setState:")                           // -[NSMenuItem setState:(NSControlStateValue)]
	selAlloc                = objc.RegisterName("alloc")
	selInit                 = objc.RegisterName("init")

	// Action methods of our target class: -(void)name:(id)sender.
	selActToggle = objc.RegisterName("harkToggle:")
	selActOpen   = objc.RegisterName("harkOpen:")
	selActRecent = objc.RegisterName("harkRecent:")
	selActQuit   = objc.RegisterName("harkQuit:")
	selActMode   = objc.RegisterName("harkMode:")
)

const (
	variableStatusItemLength  = -1.0 // NSVariableStatusItemLength
	activationPolicyRegular   = 0    // NSApplicationActivationPolicyRegular: Dock icon, menu bar
	activationPolicyAccessory = 1    // NSApplicationActivationPolicyAccessory: no Dock icon
	iconPoints                = 18.0 // status-bar glyph size in points
	controlStateOn            = 1    // NSControlStateValueOn: the check mark
)

// nsSize is NSSize/CGSize: two CGFloat (double on 64-bit).
type nsSize struct {
	_             structs.HostLayout
	Width, Height float64
}

// Callbacks are the menu's actions. They run on their own goroutine, never
// on the main thread, so they may block or call back into AppKit helpers.
type Callbacks struct {
	OnToggle func()
	OnOpen   func()
	OnQuit   func()
	OnRecent func(i int)
	OnMode   func(name string) // "" = automatic
}

// Tray is the status item. Use New; methods are safe from any goroutine.
type Tray struct {
	mu     sync.Mutex
	cb     Callbacks
	state  State
	item   objc.ID // retained NSStatusItem, 0 when not shown
	target objc.ID // retained HarkMenuTarget instance
}

var (
	classOnce sync.Once
	classErr  error
	class     objc.Class

	targetsMu sync.Mutex
	targets   = map[objc.ID]*Tray{} // target instance -> its tray
)

// registerClass defines HarkMenuTarget, an NSObject subclass whose action
// methods find their Tray and call the Go callbacks.
func registerClass() error {
	classOnce.Do(func() {
		if _, err := ns.Framework("AppKit"); err != nil {
			classErr = err
			return
		}
		nsobject := objc.GetClass("NSObject")
		action := func(pick func(t *Tray, sender objc.ID) func()) func(self objc.ID, cmd objc.SEL, sender objc.ID) {
			return func(self objc.ID, _ objc.SEL, sender objc.ID) {
				targetsMu.Lock()
				t := targets[self]
				targetsMu.Unlock()
				if t == nil {
					return
				}
				t.mu.Lock()
				f := pick(t, sender)
				t.mu.Unlock()
				if f != nil {
					go f() // never block the main thread on app work
				}
			}
		}
		class, classErr = objc.RegisterClass("HarkMenuTarget", nsobject, nil, nil, []objc.MethodDef{
			{Cmd: selActToggle, Fn: action(func(t *Tray, _ objc.ID) func() { return t.cb.OnToggle })},
			{Cmd: selActOpen, Fn: action(func(t *Tray, _ objc.ID) func() { return t.cb.OnOpen })},
			{Cmd: selActQuit, Fn: action(func(t *Tray, _ objc.ID) func() { return t.cb.OnQuit })},
			{Cmd: selActRecent, Fn: action(func(t *Tray, sender objc.ID) func() {
				if t.cb.OnRecent == nil {
					return nil
				}
				i := objc.Send[int](sender, selTag)
				f := t.cb.OnRecent
				return func() { f(i) }
			})},
			{Cmd: selActMode, Fn: action(func(t *Tray, sender objc.ID) func() {
				// The tag indexes the modes the menu was built from (t.mu
				// is held, so t.state is the state last applied or newer).
				name, ok := t.state.ModeAt(objc.Send[int](sender, selTag))
				f := t.cb.OnMode
				if f == nil || !ok {
					return nil
				}
				return func() { f(name) }
			})},
		})
	})
	return classErr
}

// New returns a tray that is not shown yet.
func New() *Tray { return &Tray{} }

// Show puts the status item in the menu bar with cb as its actions; a
// second Show only replaces the callbacks.
func (t *Tray) Show(cb Callbacks) error {
	if err := registerClass(); err != nil {
		return err
	}
	t.mu.Lock()
	t.cb = cb
	shown := t.item != 0
	t.mu.Unlock()
	if shown {
		return nil
	}
	var err error
	if e := mainthread.Sync(func() { err = t.create() }); e != nil {
		return e
	}
	return err
}

// create runs on the main thread.
func (t *Tray) create() error {
	var err error
	ns.WithPool(func() {
		bar := objc.ID(objc.GetClass("NSStatusBar")).Send(selSystemStatusBar)
		// The status bar does not keep the item alive: we retain it.
		item := ns.Retain(bar.Send(selStatusItemWithLength, float64(variableStatusItemLength)))
		if item == 0 {
			err = errors.New("menubar: could not create the status item")
			return
		}
		target := objc.ID(class).Send(selAlloc).Send(selInit)
		targetsMu.Lock()
		targets[target] = t
		targetsMu.Unlock()

		t.mu.Lock()
		t.item, t.target = item, target
		s := t.state
		t.mu.Unlock()
		t.apply(s)
	})
	return err
}

// apply mirrors s into the status item; main thread, inside a pool.
func (t *Tray) apply(s State) {
	t.mu.Lock()
	item, target := t.item, t.target
	t.mu.Unlock()
	if item == 0 {
		return
	}
	button := item.Send(selButton)
	if button != 0 {
		img := objc.ID(objc.GetClass("NSImage")).Send(selAlloc).Send(selInitWithData, ns.Data(Icon(s)))
		if img != 0 {
			img.Send(selSetTemplate, true)
			img.Send(selSetSize, nsSize{Width: iconPoints, Height: iconPoints})
			button.Send(selSetImage, img)
			ns.Release(img) // the button retains it
		}
		button.Send(selSetToolTip, ns.String(Tooltip(s)))
	}
	menu := buildMenu(Build(s), target)
	item.Send(selSetMenu, menu)
	ns.Release(menu) // the status item retains it
}

// buildMenu returns a +1 NSMenu for items.
func buildMenu(items []Item, target objc.ID) objc.ID {
	menu := objc.ID(objc.GetClass("NSMenu")).Send(selAlloc).Send(selInitWithTitle, ns.String("Hark"))
	// We set enabled states ourselves instead of AppKit's validation.
	menu.Send(selSetAutoenablesItems, false)
	for _, it := range items {
		if it.Separator {
			menu.Send(selAddItem, objc.ID(objc.GetClass("NSMenuItem")).Send(selSeparatorItem))
			continue
		}
		var action objc.SEL
		switch it.Action {
		case ActionToggle:
			action = selActToggle
		case ActionOpen:
			action = selActOpen
		case ActionRecent:
			action = selActRecent
		case ActionQuit:
			action = selActQuit
		case ActionMode:
			action = selActMode
		}
		mi := objc.ID(objc.GetClass("NSMenuItem")).Send(selAlloc).Send(selInitWithTitleAction,
			ns.String(it.Title), action, ns.String(it.Key))
		if action != 0 {
			mi.Send(selSetTarget, target)
		}
		mi.Send(selSetTag, it.Tag)
		mi.Send(selSetEnabled, it.Enabled)
		if it.Checked {
			mi.Send(selSetState, controlStateOn)
		}
		if it.Submenu != nil {
			sub := buildMenu(it.Submenu, target)
			mi.Send(selSetSubmenu, sub)
			ns.Release(sub)
		}
		menu.Send(selAddItem, mi)
		ns.Release(mi) // the menu retains it
	}
	return menu
}

// update records a state change and refreshes the item asynchronously, so
// callers (the dictation pipeline) never wait on the main thread.
func (t *Tray) update(change func(s *State)) {
	t.mu.Lock()
	change(&t.state)
	s := t.state
	shown := t.item != 0
	t.mu.Unlock()
	if shown {
		_ = mainthread.Async(func() { ns.WithPool(func() { t.apply(s) }) })
	}
}

// SetRecording switches the icon and the Start/Stop item.
func (t *Tray) SetRecording(on bool) { t.update(func(s *State) { s.Recording = on }) }

// SetTranscribing switches the icon and menu to transcribing.
func (t *Tray) SetTranscribing(on bool) { t.update(func(s *State) { s.Transcribing = on }) }

// SetRecent replaces the recent-transcripts submenu (newest first).
func (t *Tray) SetRecent(items []string) {
	cp := append([]string(nil), items...)
	t.update(func(s *State) { s.Recent = cp })
}

// SetModes replaces the Mode submenu: the modes' names and the one chosen
// by hand ("" = automatic), which is checked.
func (t *Tray) SetModes(names []string, active string) {
	cp := append([]string(nil), names...)
	t.update(func(s *State) { s.Modes, s.ActiveMode = cp, active })
}

// Remove takes the item out of the menu bar.
func (t *Tray) Remove() {
	t.mu.Lock()
	item, target := t.item, t.target
	t.item, t.target = 0, 0
	t.mu.Unlock()
	if item == 0 {
		return
	}
	_ = mainthread.Async(func() {
		bar := objc.ID(objc.GetClass("NSStatusBar")).Send(selSystemStatusBar)
		bar.Send(selRemoveStatusItem, item)
		ns.Release(item)
		targetsMu.Lock()
		delete(targets, target)
		targetsMu.Unlock()
		ns.Release(target)
	})
}

// SetDockIconVisible shows or hides the Dock icon: the regular activation
// policy with a Dock icon, or accessory (menu-bar only). With LSUIElement
// set in Info.plist the app starts as accessory.
func SetDockIconVisible(visible bool) error {
	if _, err := ns.Framework("AppKit"); err != nil {
		return err
	}
	policy := activationPolicyAccessory
	if visible {
		policy = activationPolicyRegular
	}
	var ok bool
	if err := mainthread.Sync(func() {
		app := objc.ID(objc.GetClass("NSApplication")).Send(selSharedApplication)
		ok = objc.Send[bool](app, selSetActivationPolicy, policy)
	}); err != nil {
		return err
	}
	if !ok {
		return errors.New("menubar: macOS refused the activation policy change")
	}
	return nil
}

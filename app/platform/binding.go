package platform

import "sync"

// Binding keeps one global hotkey besides dictation's (the mode hotkey,
// the "copy the better text" keystroke) bound to the spec the settings
// hold. It remembers the spec bound, so a settings change that leaves it
// alone does not re-grab the key: a re-grab from inside the key's own
// callback (its action changed the settings) would wait on itself.
type Binding struct {
	mu   sync.Mutex
	spec string
}

// Follow binds spec ("" = none) on hk to action when spec differs from
// what is bound; errors (a key another app holds, an action that failed)
// go to report. A spec that failed to bind is tried again by the next
// Follow.
func (b *Binding) Follow(hk Hotkey, spec string, action func() error, report func(error)) {
	if hk == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if spec == b.spec {
		return
	}
	_ = hk.Unregister()
	b.spec = ""
	if spec == "" {
		return
	}
	if err := hk.Register(spec, func() { report(action()) }, nil); err != nil {
		report(err)
		return
	}
	b.spec = spec
}

// Spec is the spec bound now ("" = none).
func (b *Binding) Spec() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spec
}

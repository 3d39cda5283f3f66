package desktop

import (
	"errors"
	"fmt"
	"sync"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/app/trigger"
)

// triggerState is the single-key trigger in use: the machine's runner,
// fed by the platform's trigger source.
type triggerState struct {
	mu sync.Mutex
	r  *trigger.Runner
}

// bindTrigger (re)binds the single-key trigger (Right Option, Fn, a
// mouse side button) from the settings. It works beside the hotkey, which
// stays registered: when the trigger cannot be watched (no such key on
// this OS, the permission refused, the key held by another app) the error
// says so and the hotkey still serves.
func (s *Shell) bindTrigger(st app.SettingsData) {
	s.trig.mu.Lock()
	defer s.trig.mu.Unlock()
	s.unbindTriggerLocked()
	if st.Trigger == "" {
		return
	}
	src := s.plat.Trigger
	if src == nil {
		s.report(errors.New("single-key triggers are not available on this system; the hotkey " + st.Hotkey + " still works"))
		return
	}
	key, cfg := st.TriggerConfig()
	m, err := trigger.New(key, cfg)
	if err != nil {
		s.report(err)
		return
	}
	d := s.app.Dictation
	r := trigger.NewRunner(m, func(a trigger.Action) { s.report(d.Trigger(a)) }, d.Recording)
	if err := src.Watch(key, r.Feed); err != nil {
		r.Close()
		s.report(fmt.Errorf("%w; the hotkey %s still works", err, st.Hotkey))
		return
	}
	s.trig.r = r
}

// unbindTrigger stops the trigger (on quit).
func (s *Shell) unbindTrigger() {
	s.trig.mu.Lock()
	defer s.trig.mu.Unlock()
	s.unbindTriggerLocked()
}

func (s *Shell) unbindTriggerLocked() {
	if s.plat.Trigger != nil {
		_ = s.plat.Trigger.Close() // no more Feed calls
	}
	if s.trig.r != nil {
		s.trig.r.Close()
		s.trig.r = nil
	}
}

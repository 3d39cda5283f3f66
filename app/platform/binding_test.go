package platform

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeHotkey records registrations and presses its key on demand.
type fakeHotkey struct {
	log   []string
	down  func()
	taken map[string]bool
}

func (h *fakeHotkey) Register(spec string, down, up func()) error {
	if h.taken[spec] {
		return errors.New(spec + " is taken")
	}
	h.log = append(h.log, "register "+spec)
	h.down = down
	return nil
}

func (h *fakeHotkey) Unregister() error {
	h.log = append(h.log, "unregister")
	h.down = nil
	return nil
}

func TestBindingFollowsTheSettings(t *testing.T) {
	hk := &fakeHotkey{taken: map[string]bool{"Ctrl+Alt+X": true}}
	var b Binding
	var reported []error
	report := func(err error) {
		if err != nil {
			reported = append(reported, err)
		}
	}
	presses := 0
	action := func() error {
		presses++
		if presses == 2 {
			return errors.New("no modes")
		}
		return nil
	}

	b.Follow(hk, "Ctrl+Alt+M", action, report)
	b.Follow(hk, "Ctrl+Alt+M", action, report) // another setting changed: no re-grab
	require.Equal(t, []string{"unregister", "register Ctrl+Alt+M"}, hk.log)
	require.Equal(t, "Ctrl+Alt+M", b.Spec())

	hk.down()
	hk.down()
	require.Equal(t, 2, presses)
	require.EqualError(t, errors.Join(reported...), "no modes", "the action's error is reported")

	b.Follow(hk, "Ctrl+Alt+X", action, report) // another app holds it
	require.Len(t, reported, 2)
	require.EqualError(t, reported[1], "Ctrl+Alt+X is taken")
	require.Equal(t, "", b.Spec())
	require.Nil(t, hk.down, "the old key was given back")

	delete(hk.taken, "Ctrl+Alt+X")
	b.Follow(hk, "Ctrl+Alt+X", action, report) // tried again
	require.Equal(t, "Ctrl+Alt+X", b.Spec())

	hk.log = nil
	b.Follow(hk, "", action, report) // turned off
	require.Equal(t, []string{"unregister"}, hk.log)
	require.Equal(t, "", b.Spec())

	b.Follow(nil, "Ctrl+Alt+M", action, report) // an OS without the hotkey
}

package trigger

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// The runner in real time: a held key starts push-to-talk after the tap
// length, its release stops it, and a chord never fires.
func TestRunnerRealTime(t *testing.T) {
	m, err := New(RightCtrl, Config{Mode: ModePush, Tap: 30 * time.Millisecond})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []Action
	rec := false
	r := NewRunner(m, func(a Action) {
		mu.Lock()
		got = append(got, a)
		rec = a == Start
		mu.Unlock()
	}, func() bool { mu.Lock(); defer mu.Unlock(); return rec })
	defer r.Close()
	snapshot := func() []Action { mu.Lock(); defer mu.Unlock(); return append([]Action(nil), got...) }

	r.Feed(RightCtrl, true)
	require.Eventually(t, func() bool { return len(snapshot()) == 1 }, shared.Wait(t, 2*time.Second), 5*time.Millisecond)
	r.Feed(RightCtrl, false)
	require.Eventually(t, func() bool { return len(snapshot()) == 2 }, shared.Wait(t, 2*time.Second), 5*time.Millisecond)
	require.Equal(t, []Action{Start, Stop}, snapshot())

	// A chord fed at once: the release is queued before the deadline, so
	// nothing starts even if the runner is slow to look.
	r.Feed(RightCtrl, true)
	r.Feed("", true)
	r.Feed(RightCtrl, false)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, []Action{Start, Stop}, snapshot())
}

func TestParseKeyAndConfig(t *testing.T) {
	for in, want := range map[string]Key{"Right Option": RightAlt, "rightcmd": RightSuper, "Fn": Fn, "Globe": Fn, "Right Ctrl": RightCtrl, "mouse8": Mouse8} {
		k, err := ParseKey(in)
		require.NoError(t, err, in)
		require.Equal(t, want, k, in)
	}
	_, err := ParseKey("Space")
	require.ErrorContains(t, err, "not one of")
	_, err = New(Fn, Config{Mode: "hold"})
	require.ErrorContains(t, err, "trigger mode")
}

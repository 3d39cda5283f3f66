package shared

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fatalTB records a Fatalf and stops the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs fn with a fatalTB and returns what it failed with ("": it
// did not).
func fatalOf(fn func(testing.TB)) string {
	tb := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.msg
}

// One factor scales every wait; unset it is 1, and anything but a
// positive number fails the test rather than being guessed at.
func TestWaitScale(t *testing.T) {
	t.Setenv(WaitScaleEnv, "")
	require.Equal(t, 90*time.Second, Wait(t, 90*time.Second))
	t.Setenv(WaitScaleEnv, "2.5")
	require.Equal(t, 225*time.Second, Wait(t, 90*time.Second))
	t.Setenv(WaitScaleEnv, "0.5")
	require.Equal(t, 15*time.Second, Wait(t, 30*time.Second))
	for _, bad := range []string{"0", "-1", "fast", "NaN", "+Inf"} {
		t.Setenv(WaitScaleEnv, bad)
		msg := fatalOf(func(tb testing.TB) { Wait(tb, time.Second) })
		require.Contains(t, msg, WaitScaleEnv+`="`+bad+`": want a positive number`, bad)
	}
}

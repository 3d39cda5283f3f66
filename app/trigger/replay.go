package trigger

import "time"

// Timed is an action and the time it fell due.
type Timed struct {
	At     time.Duration
	Action Action
}

// Elsewhere is a pseudo-key for Replay: at its At, dictation was started
// (Down) or stopped (up) by something other than the trigger (the
// window, auto-stop).
const Elsewhere Key = "(elsewhere)"

// Replay runs a recorded stream through m exactly as Runner runs live
// input (Sync before each step, push-to-talk starting at its deadline),
// with dictation recording from a Start until a Stop or Cancel. It is
// how recorded event streams are tested, here and in the OS sources.
func Replay(m *Machine, ins []Input) []Timed {
	var got []Timed
	recording := false
	take := func(at time.Duration, acts []Action) {
		for _, a := range acts {
			got = append(got, Timed{At: at, Action: a})
			recording = a == Start
		}
	}
	advance := func(to time.Duration) {
		for {
			at, ok := m.Deadline()
			if !ok || at > to {
				return
			}
			m.Sync(recording)
			take(at, m.Advance(at))
		}
	}
	for _, in := range ins {
		advance(in.At)
		if in.Key == Elsewhere {
			recording = in.Down
			continue
		}
		m.Sync(recording)
		take(in.At, m.Step(in))
	}
	if len(ins) > 0 {
		advance(ins[len(ins)-1].At + time.Hour)
	}
	return got
}

//go:build linux && cgo

package app

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// timedOutput is the platform output of the test: it keeps the text
// inserted and when it came.
type timedOutput struct {
	mu   sync.Mutex
	text string
	at   time.Time
}

func (o *timedOutput) Insert(text, _ string, _ bool) error {
	o.mu.Lock()
	o.text, o.at = text, time.Now()
	o.mu.Unlock()
	return nil
}

func (o *timedOutput) last() (string, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.text, o.at
}

// queueLog records the runtime's queue events for one model, and when
// they came (for the log only).
type queueLog struct {
	path string
	mu   sync.Mutex
	evs  []runtime.QueueEvent
	at   []time.Time
}

func (q *queueLog) add(e runtime.QueueEvent) {
	if e.Path != q.path {
		return
	}
	q.mu.Lock()
	q.evs = append(q.evs, e)
	q.at = append(q.at, time.Now())
	q.mu.Unlock()
}

// longestDictationWait is the longest a dictation request waited for the
// model, from event i on.
func (q *queueLog) longestDictationWait(i int) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	var queued []time.Time // FIFO: dictation requests are served in order
	var most time.Duration
	for j := i; j < len(q.evs); j++ {
		e := q.evs[j]
		if e.Pri != runtime.Dictation {
			continue
		}
		switch e.Kind {
		case runtime.Queued:
			queued = append(queued, q.at[j])
		case runtime.Left:
			queued = queued[1:]
		case runtime.Granted:
			if len(queued) > 0 {
				most = max(most, q.at[j].Sub(queued[0]))
				queued = queued[1:]
			}
		}
	}
	return most
}

func (q *queueLog) since(i int) []runtime.QueueEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]runtime.QueueEvent{}, q.evs[i:]...)
}

func (q *queueLog) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.evs)
}

// dictationClip is the one dictated: a 4.8-s kit clip, the length the
// dictation target is stated for (loopbackClip).
const dictationClip = loopbackClip

// dictateLoopback dictates clip through the hotkey's path (Dictation's
// Start and Stop, cr the recorder) while it plays into the microphone,
// with the call's clip others (when set) playing on the system side from
// a second before it; it returns the text inserted and the time from the
// release (Stop) to the text in the output.
func dictateLoopback(t *testing.T, pa *pulsetest.Server, a *App, cr *CaptureRecorder, out *timedOutput, others string) (string, time.Duration) {
	t.Helper()
	var call *pulsetestPlay
	if others != "" {
		call = playClip(t, pa, others, "")
		time.Sleep(time.Second)
	}
	require.NoError(t, a.Dictation.Start())
	user := playClip(t, pa, dictationClip, pulsetest.MicSink)
	user.wait(t)
	heardToTheEnd(t, cr)
	time.Sleep(300 * time.Millisecond) // the key comes up after the last word
	released := time.Now()
	_, err := a.Dictation.Stop()
	require.NoError(t, err, "transcribed and inserted")
	text, at := out.last()
	if call != nil {
		call.wait(t)
	}
	return text, at.Sub(released)
}

// pulsetestPlay is a clip playing into a sink.
type pulsetestPlay struct{ wait func(t *testing.T) }

func playClip(t *testing.T, pa *pulsetest.Server, clip, sink string) *pulsetestPlay {
	cmd := pa.Play(t, shared.Path(t, "audio", clip+".wav"), sink)
	return &pulsetestPlay{wait: func(t *testing.T) { require.NoError(t, cmd.Wait()) }}
}

// TestDictationDuringMeeting is issue 40's "dictation first" through the
// loopback harness (PulseAudio null sinks: the call into the default
// output, the user into the microphone's sink). A dictation is made
// through the hotkey's path (the dictation service's Start and Stop, the
// real capture, the live stream) first alone, then while a meeting
// records with both sides talking: the call talks over the dictation,
// and the user's dictated words reach the meeting's microphone channel
// too. It checks:
//   - the dictation's text is its clip's, alone and in the meeting;
//   - dictation first, from the runtime's queue events (counted, not
//     timed): whenever a dictation waits for the speech model, no meeting
//     window is given it before the dictation, and it waits at most for
//     the window in progress; the meeting's windows asked for the model
//     while the dictation held it (they competed), and were served after;
//   - in a quiet moment of the meeting the model is free: the meeting
//     takes it for each window only (held through the silences, it made
//     a dictation wait for the meeting's next speech);
//   - the meeting's recording lost nothing: nothing lost on disk, and its
//     microphone channel holds the dictated clip whole;
//   - the live transcript goes on after the dictation: both sides' next
//     turns are transcribed, with their speakers.
//
// The release-to-text times (the dictation target, < 1 s, is checked by
// the benchmarks, BENCHMARKS.md) are logged, alone and in the meeting.
func TestDictationDuringMeeting(t *testing.T) {
	pa := pulsetest.Start(t)
	pa.AddMic(t)
	ev := newEvents()
	a, err := New(Config{DataDir: t.TempDir(), ModelsDir: testModelsDir(t), Emitter: ev, Threads: 2, NoSpeedProbe: true,
		// the kit model was never trained with prompts
		MeetingStream: whisper.StreamConfig{NoPrompt: true}})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	a.Dictation.streamConfig = whisper.StreamConfig{NoPrompt: true}
	setOutput(t, a, platform.ModeCopy)
	out := &timedOutput{}
	a.SetOutput(out)
	cr := NewCaptureRecorder(nil)
	t.Cleanup(func() { cr.Close() })
	rec := &spyStreamed{CaptureRecorder: cr}
	a.SetRecorder(rec)
	require.NoError(t, cr.Arm(""))
	require.Contains(t, cr.rec.Device().Name, pulsetest.MicSink)
	kit, _, err := a.Models.resolveSpeech("")
	require.NoError(t, err)
	q := &queueLog{path: kit}
	a.rt.Observe(q.add)
	want := kitText(t, dictationClip)

	// Alone: the figure to compare with.
	alone, aloneTime := dictateLoopback(t, pa, a, cr, out, "")
	require.NotNil(t, rec.got, "streamed")
	t.Logf("alone: release to text %v: %q", aloneTime.Round(time.Millisecond), alone)
	require.LessOrEqual(t, shared.WER(want, alone), 0.1, "the dictation alone: %q", alone)

	// The meeting: the call, then the user.
	meetStart := time.Now()
	_, err = a.Meetings.Start()
	require.NoError(t, err)
	// where the meeting is (for the log)
	mark := func(what string) { t.Logf("%5.1f s of the meeting: %s", a.Meetings.Status().Seconds, what) }
	mark("the call")
	playClip(t, pa, "librispeech-1089-134691-0001", "").wait(t)
	time.Sleep(time.Second)
	mark("the user")
	playClip(t, pa, "ljspeech-LJ001-0011", pulsetest.MicSink).wait(t)

	// A quiet moment, once the live transcript has caught up: the meeting
	// does not hold the model.
	free := func() bool {
		for _, in := range a.rt.Loaded() {
			if in.Path == kit {
				return !in.InUse && in.Waiting == 0
			}
		}
		return false
	}
	require.Eventually(t, free, shared.Wait(t, time.Minute), 10*time.Millisecond,
		"the meeting is quiet and its live transcript has caught up: the speech model must be free")
	before := q.since(0)
	require.True(t, granted(before, runtime.Interactive), "the meeting's live transcript used the model: %v", before)

	// The dictation, the call talking over it.
	from := q.len()
	mark("the dictation (the call over it)")
	inMeeting, meetTime := dictateLoopback(t, pa, a, cr, out, "librivox-sense-and-sensibility-0890")
	t.Logf("in the meeting: release to text %v, the longest wait for the model %v: %q",
		meetTime.Round(time.Millisecond), q.longestDictationWait(from).Round(time.Millisecond), inMeeting)
	require.LessOrEqual(t, shared.WER(want, inMeeting), 0.1, "the dictation in the meeting: %q", inMeeting)
	during := q.since(from)

	// Both sides go on.
	after := a.Meetings.Status().Seconds
	mark("the user")
	playClip(t, pa, "ljspeech-LJ001-0016", pulsetest.MicSink).wait(t)
	mark("the call")
	playClip(t, pa, "librispeech-1089-134686-0001", "").wait(t) // Stop commits it
	wall := time.Since(meetStart)
	stopAt := time.Now()
	st, err := a.Meetings.Stop()
	require.NoError(t, err)
	t.Logf("the meeting's Stop (the live transcript's tail) took %v", time.Since(stopAt).Round(time.Millisecond))

	// Dictation first, counted from the queue (both dictations').
	waits, lent := dictationFirst(t, q.since(0))
	t.Logf("queue: %d dictation requests waited for the model, %d of them behind a meeting window; "+
		"during the dictation in the meeting, %d meeting windows waited for it", waits, lent, meetingWaits(during))
	require.Positive(t, meetingWaits(during), "the meeting's live transcript asked for the model during the dictation: %v", during)

	// The recording: nothing lost, the dictation in its microphone channel.
	dir := filepath.Dir(st.Notes)
	meta, err := meeting.Read(filepath.Dir(dir), filepath.Base(dir))
	require.NoError(t, err)
	require.Zero(t, meta.LostSeconds, "audio lost from the recording")
	t.Logf("the meeting recorded %.1f s in %.1f s", meta.Duration, wall.Seconds())
	chans, err := audio.LoadChannels16k(filepath.Join(dir, meeting.AudioName))
	require.NoError(t, err)
	you := chans[am.You]
	ref, err := audio.Load16k(shared.Path(t, "audio", dictationClip+".wav"))
	require.NoError(t, err)
	found := false
	for from := 0; from < len(you); {
		at := pulsetest.Onset(you[from:])
		if at < 0 {
			break
		}
		at += from
		lag, c := pulsetest.Align(ref, you, 0, len(ref), at-pulsetest.Onset(ref), 800)
		if c > 0.9 {
			t.Logf("the dictated clip is in the meeting's microphone channel at %.2f s (correlation %.3f over its %.1f s)",
				float64(lag)/16000, c, float64(len(ref))/16000)
			found = true
			break
		}
		from = at + 16000 // the next sound a second on
	}
	require.True(t, found, "the meeting's microphone channel holds the dictated clip whole")

	// The live transcript after the dictation.
	var text strings.Builder
	for _, l := range st.Lines {
		fmt.Fprintf(&text, "%5.1f-%5.1f %s: %s\n", l.Start, l.End, l.Speaker, l.Text)
	}
	t.Logf("live transcript:\n%s", text.String())
	// The kit model's live text of a turn is not reliable in a meeting
	// (it knows its clips from their onsets, and a live window starts
	// where the stream is: README, Meetings), so what is checked is that
	// both sides' turns after the dictation were transcribed, by speaker.
	for _, sp := range []int{am.You, am.Others} {
		require.True(t, slices.ContainsFunc(st.Lines, func(l meeting.Line) bool {
			return l.Speaker == am.Names[sp] && l.End > after+1 && strings.TrimSpace(l.Text) != ""
		}), "%s: no words after the dictation (from %.1f s)", am.Names[sp], after)
	}
}

// granted reports whether a request at pri got the model.
func granted(evs []runtime.QueueEvent, pri runtime.Priority) bool {
	for _, e := range evs {
		if e.Kind == runtime.Granted && e.Pri == pri {
			return true
		}
	}
	return false
}

// meetingWaits counts the meeting windows that waited for the model.
func meetingWaits(evs []runtime.QueueEvent) int {
	n := 0
	for _, e := range evs {
		if e.Kind == runtime.Queued && e.Pri == runtime.Interactive {
			n++
		}
	}
	return n
}

// dictationFirst checks the queue's order: while a dictation request
// waits, the model goes to no meeting window, and it waits for one
// holder's release only (the window in progress). It returns how many
// dictation requests waited, and how many of those behind a meeting
// window.
func dictationFirst(t *testing.T, evs []runtime.QueueEvent) (waits, lent int) {
	t.Helper()
	waiting := map[runtime.Priority]int{}
	holder, held := runtime.Priority(0), false
	// the meeting windows' releases since the dictation requests began to
	// wait (another dictation request's do not count)
	releases := 0
	for i, e := range evs {
		switch e.Kind {
		case runtime.Queued:
			if e.Pri == runtime.Dictation {
				if waiting[runtime.Dictation] == 0 {
					releases = 0
				}
				waits++
				if held && holder == runtime.Interactive {
					lent++
				}
			}
			waiting[e.Pri]++
		case runtime.Left:
			waiting[e.Pri]--
		case runtime.Granted:
			if waiting[runtime.Dictation] > 0 {
				require.Equal(t, runtime.Dictation, e.Pri, "event %d: the model went to a %v request while a dictation waited: %v", i, e.Pri, evs)
			}
			if waiting[e.Pri] > 0 {
				waiting[e.Pri]--
			}
			holder, held = e.Pri, true
		case runtime.Released:
			if waiting[runtime.Dictation] > 0 && e.Pri != runtime.Dictation {
				releases++
				require.LessOrEqual(t, releases, 1, "event %d: a dictation waited past the holder's window: %v", i, evs)
			}
			held = false
		}
	}
	return waits, lent
}

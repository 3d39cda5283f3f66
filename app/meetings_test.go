package app

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/control"
	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// pushDevice is a capture device the test delivers into.
type pushDevice struct{ onData func([]float32) }

func (pushDevice) Start() error { return nil }
func (pushDevice) Stop() error  { return nil }
func (pushDevice) Close() error { return nil }

// TestMeetingThroughControl: `hark meeting start|status|stop` through the
// control socket. The call (jfk) plays on the system channel and the user
// (from 2 s, over it) talks into the microphone; stop writes notes naming
// each side's words, beside a two-channel recording. A meeting a crash
// cut short before the app started is made whole and offered, not
// finished: a new meeting starts beside it, `resume` is refused while
// that one records, and `finish` makes it a History entry; unknown or
// finished meetings are clear errors.
func TestMeetingThroughControl(t *testing.T) {
	dataDir := t.TempDir()
	// A meeting left recording by a process that died.
	crashed, err := meeting.Start(meeting.RecorderConfig{Root: filepath.Join(dataDir, "meetings")}, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	crashed.Write(make([]float32, 2*16000))

	a, play := meetingApp(t, dataDir, nil)

	r, err := control.Send(dataDir, "meeting-status", time.Minute)
	require.NoError(t, err)
	require.Equal(t, MeetingIdle, r.State)
	require.Contains(t, r.Text, "cut short by a crash: meeting "+crashed.ID())
	metas, err := a.Meetings.List()
	require.NoError(t, err)
	require.Len(t, metas, 1)
	require.Equal(t, meeting.StateInterrupted, metas[0].State, "offered, not finished")
	require.False(t, metas[0].Recovered)
	require.InDelta(t, 1.0, metas[0].Duration, 1e-9)
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "not in History until the user finishes it")

	r, err = control.Send(dataDir, "meeting-start", time.Minute)
	require.NoError(t, err)
	require.Equal(t, MeetingRecording, r.State)
	_, err = control.Send(dataDir, "meeting-start", time.Minute)
	require.ErrorContains(t, err, "already recording")
	_, err = control.Send(dataDir, "meeting-resume "+crashed.ID(), time.Minute)
	require.ErrorContains(t, err, "stop it before resuming another")
	require.Equal(t, []string{crashed.ID()}, offerIDs(a.Meetings.Status()), "the offer stays while another meeting records")

	play(2 * 16000)
	r, err = control.Send(dataDir, "meeting-status", time.Minute)
	require.NoError(t, err)
	require.Equal(t, MeetingRecording, r.State)

	r, err = control.Send(dataDir, "meeting-stop", 10*time.Minute)
	require.NoError(t, err)
	require.Equal(t, MeetingIdle, r.State)
	st := a.Meetings.Status()
	require.NotEmpty(t, st.Notes)
	require.Contains(t, r.Text, "notes: "+st.Notes)
	b, err := os.ReadFile(st.Notes)
	require.NoError(t, err)
	notes := strings.ToLower(string(b))
	t.Logf("%s", b)
	require.Contains(t, notes, "others:** and so my fellow americans")
	require.Contains(t, notes, "you:** he was not an ill disposed young man")
	_, err = os.Stat(filepath.Join(filepath.Dir(st.Notes), "transcript.json"))
	require.NoError(t, err)
	s, err := audio.Open(filepath.Join(filepath.Dir(st.Notes), meeting.AudioName))
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 2, s.Channels())

	_, err = control.Send(dataDir, "meeting-stop", time.Minute)
	require.ErrorContains(t, err, "no meeting is recording")

	stopped := filepath.Base(filepath.Dir(st.Notes))
	_, err = control.Send(dataDir, "meeting-finish "+stopped, time.Minute)
	require.ErrorContains(t, err, "finished already")
	_, err = control.Send(dataDir, "meeting-resume 20200101-000000", time.Minute)
	require.ErrorContains(t, err, "no meeting 20200101-000000")
	r, err = control.Send(dataDir, "meeting-finish", time.Minute)
	require.NoError(t, err)
	require.Equal(t, MeetingIdle, r.State)
	require.NotContains(t, r.Text, "cut short")
	st = a.Meetings.Status()
	require.Empty(t, st.Offers)
	require.Equal(t, filepath.Join(meeting.Dir(filepath.Join(dataDir, "meetings"), crashed.ID()), "notes.md"), st.Notes)
	it, err := a.History.Get(st.Item)
	require.NoError(t, err)
	require.Equal(t, KindMeeting, it.Kind)
	m, err := meeting.Read(filepath.Join(dataDir, "meetings"), crashed.ID())
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, m.State)
	require.True(t, m.Recovered)
	_, err = control.Send(dataDir, "meeting-resume", time.Minute)
	require.ErrorContains(t, err, "no meeting was cut short")
}

// offerIDs lists the meetings a status offers.
func offerIDs(st MeetingStatus) []string {
	var ids []string
	for _, o := range st.Offers {
		ids = append(ids, o.ID)
	}
	return ids
}

// playMeeting plays the meeting the tests record: the call (jfk) on the
// system channel from 0 s and the user (a Sense and Sensibility reading)
// on the microphone from sample userAt, over it; 13 s in 10-ms frames,
// advancing the capture clock by tick.
func playMeeting(t *testing.T, devs map[string]*pushDevice, userAt int, tick func(time.Duration)) {
	t.Helper()
	call, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	user, err := audio.Load16k(shared.Path(t, "audio", "librivox-sense-and-sensibility-0880.wav"))
	require.NoError(t, err)
	for k := 0; k*160 < 13*16000; k++ {
		tick(10 * time.Millisecond)
		mic, mon := make([]float32, 160), make([]float32, 160)
		for i := range 160 {
			if j := k*160 + i; j < len(call) {
				mon[i] = call[j]
			}
			if j := k*160 + i - userAt; j >= 0 && j < len(user) {
				mic[i] = user[j]
			}
		}
		devs["mic"].onData(mic)
		devs["mon"].onData(mon)
	}
}

// meetingApp opens an app on dataDir whose meeting devices the test
// plays into (playMeeting), the capture clock advanced by the play.
func meetingApp(t *testing.T, dataDir string, em Emitter) (*App, func(userAt int)) {
	t.Helper()
	a, play := meetingAppDevices(t, dataDir, em)
	return a, func(userAt int) {
		play(func(d map[string]*pushDevice, tick func(time.Duration)) { playMeeting(t, d, userAt, tick) })
	}
}

// meetingAppDevices is meetingApp whose play hands the devices ("mic",
// "mon") and the capture clock's tick to the test's own player.
func meetingAppDevices(t *testing.T, dataDir string, em Emitter) (*App, func(player func(map[string]*pushDevice, func(time.Duration)))) {
	t.Helper()
	var mu sync.Mutex
	devs := map[string]*pushDevice{}
	now := time.Unix(5000, 0)
	open := func(o capture.Options) (am.Source, error) {
		d := &pushDevice{onData: o.OnData}
		mu.Lock()
		devs[o.DeviceID] = d
		mu.Unlock()
		return d, nil
	}
	a, err := New(Config{DataDir: dataDir, ModelsDir: testModelsDir(t), Threads: 2, NoSpeedProbe: true, Emitter: em,
		MeetingCapture: am.CaptureConfig{MicID: "mic", MonitorID: "mon", Open: open,
			Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }},
		MeetingStream: whisper.StreamConfig{NoPrompt: true}}) // the kit model was never trained with prompts
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a, func(player func(map[string]*pushDevice, func(time.Duration))) {
		mu.Lock()
		d := map[string]*pushDevice{"mic": devs["mic"], "mon": devs["mon"]}
		mu.Unlock()
		player(d, func(dt time.Duration) { mu.Lock(); now = now.Add(dt); mu.Unlock() })
	}
}

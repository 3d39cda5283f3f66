//go:build linux && cgo

package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture/pulsetest"
	"github.com/harkapp/hark/internal/shared"
)

// TestBrowserMeeting drives the Meeting view in headless Chromium against
// `hark ui` while a real meeting goes through the loopback harness
// (PulseAudio null sinks): the call into the default sink, the user into
// the microphone's sink; stories260K summarizes (meeting.mjs). Of two
// meetings a killed process left recording, one (the call, jfk) is
// finished from its offer first; the other stays offered. Its
// screenshots, meeting-live.png and meeting.png, go to its scratch folder
// (the offers are on them): the README's are TestMeetingScreenshots'.
func TestBrowserMeeting(t *testing.T) {
	fe, pa, models := meetingHarness(t)
	data := t.TempDir()
	call, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	crashed, err := meeting.Start(meeting.RecorderConfig{Root: filepath.Join(data, "meetings")}, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	frames := make([]float32, 0, 2*len(call))
	for _, x := range call {
		frames = append(frames, 0, x) // {You, Others}
	}
	crashed.Write(frames) // and abandoned, as a kill leaves it
	other, err := meeting.Start(meeting.RecorderConfig{Root: filepath.Join(data, "meetings")}, time.Now().Add(-2*time.Hour))
	require.NoError(t, err)
	other.Write(make([]float32, 2*16000))
	url, stop := startUI(t, models, data, filepath.Join(fe, "dist"))
	defer stop()

	side := func(name string) map[string]string {
		var ref struct {
			Text string `json:"text"`
		}
		readJSON(t, shared.Path(t, "whisper-kit", "reference", "transcribe", name+".json"), &ref)
		return map[string]string{"clip": shared.Path(t, "audio", name+".wav"), "text": ref.Text}
	}
	tc, err := json.Marshal(map[string]any{
		"others": side("librivox-sense-and-sensibility-0930"), "you": side("librivox-sense-and-sensibility-0880"),
		"micSink": pulsetest.MicSink, "offer": map[string]string{"id": crashed.ID(), "text": "fellow americans", "other": other.ID()},
	})
	require.NoError(t, err)
	scratch := scratchDir(t)
	_, err = browserScript(t, fe, "meeting.mjs", append(pa.Env(), "HARK_URL="+url, "E2E_CASE="+string(tc),
		"E2E_SHOTS="+scratch), scratch, "failure-meeting.png")
	if err != nil {
		stop() // the app finishes the meeting: what it recorded is told
		logMeetings(t, filepath.Join(data, "meetings"))
	}
	require.NoError(t, err, "browser test failed")
	// the resumed meeting is the crashed one, grown past what it kept (1 s)
	meta, err := meeting.Read(filepath.Join(data, "meetings"), other.ID())
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, meta.State)
	require.Greater(t, meta.Duration, 1.5, "the resumed recording's audio: what it kept and what came after")
}

// meetingHarness builds the UI, starts the loopback harness with its
// microphone, and puts the kit and chat models in a models folder.
func meetingHarness(t *testing.T) (fe string, pa *pulsetest.Server, models string) {
	fe = filepath.Join(repoRoot(t), "frontend")
	prepareFrontend(t, fe)
	pa = pulsetest.Start(t)
	pa.AddMic(t)
	models = t.TempDir()
	linkOrCopy(t, shared.Path(t, "whisper-kit", "models", kitModel), filepath.Join(models, kitModel))
	linkOrCopy(t, shared.Path(t, "models", chatFile), filepath.Join(models, chatFile))
	return fe, pa, models
}

// logMeetings logs each meeting's notes and the loudness of each channel
// of its recording, and keeps the recording (a failed run tells what was
// heard).
func logMeetings(t *testing.T, root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, dir := range dirs {
		notes, _ := os.ReadFile(filepath.Join(dir, "notes.md"))
		chs, err := audio.LoadChannels16k(filepath.Join(dir, "audio.wav"))
		var rms []float64
		for _, x := range chs {
			var e float64
			for _, v := range x {
				e += float64(v * v)
			}
			rms = append(rms, math.Sqrt(e/float64(max(1, len(x)))))
		}
		t.Logf("meeting %s: channel RMS %v (%v), recording kept at %s\n%s", filepath.Base(dir), rms, err,
			shared.KeepOnFailure(t, filepath.Join(dir, "audio.wav")), notes)
	}
}

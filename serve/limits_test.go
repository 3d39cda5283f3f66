package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/testaudio"
)

// streamStatsHook makes s report each stream's stats on the channel.
func streamStatsHook(s *Server) <-chan streamStats {
	done := make(chan streamStats, 4)
	s.streamDone = func(st streamStats) { done <- st }
	return done
}

// postJFK transcribes jfk.wav through the API; it sends the outcome on
// the returned channel (usable from any goroutine).
func postJFK(t *testing.T, base string) <-chan string {
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	ct, body := audioForm(t, wav, "model", "tiny", "response_format", "json")
	out := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/v1/audio/transcriptions", ct, body)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct{ Text string }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil {
			out <- "error: " + resp.Status + " " + string(b)
			return
		}
		out <- r.Text
	}()
	return out
}

// A client sending an hour of audio as fast as it can (the audit's 3,590
// s in 18 s) gets a clear error once more than maxStreamBacklog of it
// waits: the server never holds more than that (it reads on, so memory
// stays bounded and a departure is seen at once).
func TestAudioStreamFasterThanRealTime(t *testing.T) {
	s, base := startServer(t, Config{})
	done := streamStatsHook(s)
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	defer c.Close()
	pcm := pcmOf(t, "jfk")[:maxStreamFrame]
	go func() {
		for range 359 { // 3,590 s
			if c.WriteMessage(websocket.BinaryMessage, pcm) != nil {
				return // the server closed
			}
		}
	}()
	st := <-done
	require.ErrorContains(t, st.Err, "faster than it can be transcribed")
	require.ErrorContains(t, st.Err, maxStreamBacklog.String())
	require.LessOrEqual(t, st.Backlog, int(maxStreamBacklog.Seconds())*whisper.SampleRate)
	t.Logf("peak backlog %.1f s, %d decodes", float64(st.Backlog)/whisper.SampleRate, st.Decodes)
}

// A client that sends its audio, the end message and leaves at once
// (without waiting for the final event) stops its transcription: the
// stream's decode loop sees the cancellation instead of working through
// the rest, and the model goes at once to the next request.
func TestAudioStreamClientLeavingReleasesModel(t *testing.T) {
	s, base := startServer(t, Config{})
	done := streamStatsHook(s)
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	pcm := pcmOf(t, "jfk")
	for range 4 { // 44 s: several windows' work left after the end
		for i := 0; i < len(pcm); i += maxStreamFrame {
			require.NoError(t, c.WriteMessage(websocket.BinaryMessage, pcm[i:min(i+maxStreamFrame, len(pcm))]))
		}
	}
	require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte(`{"type":"end"}`)))
	require.NoError(t, c.Close())
	st := <-done
	require.ErrorIs(t, st.Err, errClientGone, "the decode loop stopped on the client's departure")
	require.Equal(t, jfkText, <-postJFK(t, base))
}

// While a stream is open, a file transcription of the same model is not
// held up by it: the stream takes the model for each window only
// (runtime.WindowSpeech), so while its client pauses the file request gets
// the model at once (a stream that held it from start to end made the file
// wait for the client's next audio), and the stream then goes on to its
// final event.
func TestAudioStreamSharesModel(t *testing.T) {
	// The client sends nothing while the file is transcribed: the idle
	// limit must not end the stream however slow the machine is (it
	// did at load 15, with the default 30 s).
	s, base := startServer(t, Config{WhisperBeam: 1, StreamIdle: time.Hour})
	done := streamStatsHook(s)
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	defer c.Close()
	pcm := pcmOf(t, "jfk")
	second := whisper.SampleRate * 2
	send := func(from, to int) {
		for i := from; i < to; i += second {
			require.NoError(t, c.WriteMessage(websocket.BinaryMessage, pcm[i:min(i+second, to)]))
		}
	}
	// One step's audio (Step is 1 s) in one frame: one window is decoded,
	// then the stream has nothing to do.
	require.NoError(t, c.WriteMessage(websocket.BinaryMessage, pcm[:3*second/2]))
	// A first event: the stream has decoded that window, with the model.
	var e map[string]any
	require.NoError(t, c.ReadJSON(&e))
	require.Contains(t, []any{whisper.EventCommitted, whisper.EventTentative}, e["type"], "%v", e)
	// The client pauses; the file is transcribed meanwhile.
	select {
	case text := <-postJFK(t, base):
		require.Equal(t, jfkText, text)
	case <-time.After(shared.Wait(t, 2*time.Minute)): // a bound on the work, not a latency target
		t.Fatal("the file request waited for the stream's client")
	}
	require.Empty(t, done, "the file was transcribed while the stream was open")
	send(3*second/2, len(pcm))
	require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte(`{"type":"end"}`)))
	evs := readEvents(t, c)
	require.Equal(t, whisper.EventFinal, evs[len(evs)-1]["type"], "%v", evs[len(evs)-1])
	require.NoError(t, (<-done).Err)
}

// Audio longer than MaxAudioDuration is refused, before it is
// transcribed, with the limit in the message; with channels, the
// recording's length counts (not the speech the gate lets through).
func TestTranscriptionMaxAudioDuration(t *testing.T) {
	_, base := startServer(t, Config{MaxAudioDuration: 5 * time.Second})
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	call, err := os.ReadFile(testaudio.Call(t))
	require.NoError(t, err)
	for _, form := range [][]string{{"model", "tiny"}, {"model", "tiny", "channels", "others,you"}} {
		file := wav
		if len(form) > 2 {
			file = call
		}
		st, b := postForm(t, base+"/v1/audio/transcriptions", file, form...)
		e := requireAPIError(t, st, http.StatusBadRequest, b)
		require.Contains(t, e["message"], "longer than this server's limit of 5s")
		require.Equal(t, "file", e["param"])
	}
}

// A streaming client that sends nothing for Config.StreamIdle is dropped,
// with the reason.
func TestAudioStreamIdleDropped(t *testing.T) {
	s, base := startServer(t, Config{WhisperBeam: 1, StreamIdle: 300 * time.Millisecond})
	done := streamStatsHook(s)
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	defer c.Close()
	select {
	case st := <-done:
		require.ErrorContains(t, st.Err, "timeout")
	case <-time.After(shared.Wait(t, 5*time.Second)): // well under the 30-s default
		t.Fatal("a silent client was not dropped after StreamIdle")
	}
}

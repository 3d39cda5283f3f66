package serve

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// The streaming endpoint's bounds: a frame holds at most 10 s of audio,
// and a stream at most MaxStreamAudio (a client silent for
// Config.StreamIdle is dropped).
const (
	maxStreamFrame = 10 * whisper.SampleRate * 2
	MaxStreamAudio = time.Hour
	streamWrite    = 10 * time.Second
	// maxFrameDrain is how much of an over-long message is read and
	// dropped before the error goes out.
	maxFrameDrain = 16 * maxStreamFrame
)

// streamProtocol is the WebSocket subprotocol the server answers with;
// a browser, which cannot set headers, offers it together with
// "bearer.KEY" to pass the API key.
const streamProtocol = "hark.stream"

var upgrader = websocket.Upgrader{
	Subprotocols: []string{streamProtocol},
	// Origin and Host are checked before Upgrade (localOrigin).
	CheckOrigin: func(*http.Request) bool { return true },
}

// streamKey is the API key a WebSocket request carries: the Authorization
// header, a "bearer.KEY" subprotocol, or the api_key query parameter.
func streamKey(r *http.Request) string {
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	for _, p := range websocket.Subprotocols(r) {
		if k, ok := strings.CutPrefix(p, "bearer."); ok {
			return k
		}
	}
	return r.URL.Query().Get("api_key")
}

// audioStream is GET /v1/audio/stream: a WebSocket over which the client
// sends binary frames of s16le 16 kHz mono PCM and a text frame
// {"type":"end"} when done; the server answers with the streamer's events
// as JSON text frames (whisper.WallEvent: committed, tentative, then one
// final with the whole transcript) and closes. Query: model (required),
// language, prompt.
func (s *Server) audioStream(w http.ResponseWriter, r *http.Request) {
	if err := localOrigin(r, s.cfg.APIKey != ""); err != nil {
		writeError(w, err)
		return
	}
	if s.cfg.APIKey != "" && subtle.ConstantTimeCompare([]byte(streamKey(r)), []byte(s.cfg.APIKey)) != 1 {
		writeError(w, newError(http.StatusUnauthorized, "", "invalid_api_key",
			`Missing or incorrect API key: send it as "Authorization: Bearer KEY", the subprotocol "bearer.KEY" or the api_key query parameter`))
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		writeError(w, badRequest("", "This endpoint is a WebSocket: connect with a WebSocket client"))
		return
	}
	q := r.URL.Query()
	name := q.Get("model")
	if name == "" {
		writeError(w, badRequest("model", "you must provide a model parameter"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), MaxStreamAudio+time.Minute)
	defer cancel()
	// The model is taken here to check the request against it (and load
	// it before the upgrade), then given back: the stream takes it for
	// each window only (runtime.WindowSpeech), so a dictation, or a file
	// request, never waits for a client that pauses.
	path, err := s.modelPath(name, runtime.Speech)
	if err != nil {
		writeError(w, err)
		return
	}
	take := func(ctx context.Context) (*runtime.SpeechModel, error) {
		m, err := s.rt.Speech(ctx, path, runtime.Interactive)
		if err != nil {
			return nil, loadError(name, err)
		}
		return m, nil
	}
	sm, err := take(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	lang := q.Get("language")
	if !sm.File.H.Multilingual() {
		lang = "" // an English-only model takes no language
	} else if lang != "" && !slices.Contains(whisper.Languages, lang) {
		sm.Release()
		writeError(w, badRequest("language", fmt.Sprintf("unknown language %q (an ISO-639-1 code such as en, de, fr)", lang)))
		return
	}
	var vocab []int32
	if p := strings.TrimSpace(q.Get("prompt")); p != "" {
		vocab = sm.File.Vocab.Encode(" " + p[:min(len(p), 2000)])
	}
	sm.Release()
	tr := runtime.WindowSpeech{
		Take: take,
		Set: func(sm *whisper.StreamModel) {
			if lang != "" {
				sm.Options.Language = lang
			}
			sm.Options.InitialPrompt = vocab
		},
	}

	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	defer conn.Close()
	// No read limit on the connection: gorilla would close with 1009 and
	// no word; readFrames bounds each message itself and says why.
	start := time.Now()
	send := func(e whisper.StreamEvent) error {
		if err := conn.SetWriteDeadline(time.Now().Add(streamWrite)); err != nil {
			return err
		}
		return conn.WriteJSON(whisper.WallEvent{StreamEvent: e, Wall: time.Since(start).Seconds()})
	}
	var sendErr error
	st := whisper.NewStreamer(tr, whisper.StreamConfig{}, func(e whisper.StreamEvent) {
		if sendErr == nil {
			sendErr = send(e)
		}
	})
	queue := newBacklog(maxStreamBacklog)
	in := make(chan []float32)
	readErr := make(chan error, 1)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var gone atomic.Bool
	go queue.forward(ctx, in)
	go func() {
		err := readFrames(conn, queue, s.cfg.StreamIdle)
		queue.close()
		readErr <- err // before stop: Run's cancellation finds it
		if err != nil {
			stop()
			return
		}
		// After the end message the client only waits for the final
		// event: a failed read now means it left, and the transcription
		// stops with the model released at once.
		_ = conn.SetReadDeadline(time.Time{}) // on a broken connection the read below fails
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				gone.Store(true)
				stop()
				return
			}
		}
	}()
	res, err := st.Run(ctx, in)
	select {
	case rerr := <-readErr:
		if rerr != nil {
			err = rerr
		}
	default: // still reading: Run failed on its own
	}
	if err != nil && gone.Load() {
		err = errClientGone
	}
	if err == nil {
		err = sendErr
	}
	if s.streamDone != nil {
		s.streamDone(streamStats{Backlog: queue.Peak(), Decodes: st.Decodes(), Err: err})
	}
	if err != nil {
		if !errors.Is(err, errClientGone) {
			// The error event and the close are for a client still
			// listening: one that left is not told.
			_ = conn.SetWriteDeadline(time.Now().Add(streamWrite))
			_ = conn.WriteJSON(map[string]string{"type": "error", "error": err.Error()})
			code := websocket.ClosePolicyViolation
			if errors.Is(err, errFrameTooBig) {
				code = websocket.CloseMessageTooBig
			}
			_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncate(err.Error(), 120)))
		}
		return
	}
	if send(whisper.StreamEvent{Type: whisper.EventFinal, Text: res.Text, AudioEnd: res.Duration}) == nil {
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")) // the final event was sent
	}
}

// streamStats is what a stream did, for tests (Server.streamDone).
type streamStats struct {
	Backlog int // the most audio waiting for the streamer, in samples
	Decodes int
	Err     error
}

var errClientGone = errors.New("the client went away")

// errFrameTooBig: a message over maxStreamFrame (closed with 1009).
var errFrameTooBig = fmt.Errorf("a message holds at most %d s of audio (%d bytes): send the audio in chunks (100 ms to 1 s each)",
	maxStreamFrame/2/whisper.SampleRate, maxStreamFrame)

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// readFrames queues the client's frames as samples on q until the end
// message (nil error), a bad frame, a backlog past its bound or a lost
// client. It never waits for the streamer, so a client leaving is seen at
// once.
func readFrames(conn *websocket.Conn, q *backlog, idle time.Duration) error {
	total := 0
	for {
		if err := conn.SetReadDeadline(time.Now().Add(idle)); err != nil {
			return fmt.Errorf("reading the stream: %w", err)
		}
		kind, b, err := readFrame(conn)
		if errors.Is(err, errFrameTooBig) {
			return err
		}
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return errClientGone
			}
			return fmt.Errorf("reading the stream: %w", err)
		}
		if kind == websocket.TextMessage {
			var m struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &m) != nil || m.Type != "end" {
				return errors.New(`a text message must be {"type":"end"}; audio goes in binary messages`)
			}
			return nil
		}
		if len(b)%2 != 0 {
			return errors.New("a binary message must hold whole s16le samples (an even number of bytes)")
		}
		x := make([]float32, len(b)/2)
		for i := range x {
			x[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
		}
		if total += len(x); total > int(MaxStreamAudio.Seconds())*whisper.SampleRate {
			return fmt.Errorf("the stream is over the limit of %v of audio", MaxStreamAudio)
		}
		if err := q.add(x); err != nil {
			return err
		}
	}
}

// readFrame reads one message of at most maxStreamFrame bytes; a longer
// one is errFrameTooBig (the rest of it is never read).
func readFrame(conn *websocket.Conn) (int, []byte, error) {
	kind, r, err := conn.NextReader()
	if err != nil {
		return kind, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r, maxStreamFrame+1))
	if err != nil {
		return kind, nil, err
	}
	if len(b) > maxStreamFrame {
		// The rest is read and dropped (up to a bound) so that closing
		// does not reset the connection under the client's write, which
		// would lose the error event before it is read.
		_, _ = io.Copy(io.Discard, io.LimitReader(r, maxFrameDrain)) // best effort: the frame is refused either way
		return kind, nil, errFrameTooBig
	}
	return kind, b, nil
}

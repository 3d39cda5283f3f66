package serve

import (
	"encoding/binary"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

func wsURL(base, query string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/audio/stream?" + query
}

// pcmOf is a shared clip as s16le bytes.
func pcmOf(t testing.TB, name string) []byte {
	x, err := audio.Load16k(shared.Path(t, "audio", name+".wav"))
	require.NoError(t, err)
	b := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(max(-1, min(1, v))*32767)))
	}
	return b
}

// readEvents reads events up to the final one (or an error event).
func readEvents(t testing.TB, c *websocket.Conn) []map[string]any {
	var evs []map[string]any
	for {
		var e map[string]any
		require.NoError(t, c.ReadJSON(&e))
		evs = append(evs, e)
		if e["type"] == whisper.EventFinal || e["type"] == "error" {
			return evs
		}
	}
}

// A real WebSocket client streams a clip in 100-ms frames and gets
// committed/tentative events and a final transcript that the committed
// texts add up to; the server then closes normally.
func TestAudioStreamWebSocket(t *testing.T) {
	_, base := startServer(t, Config{})
	c, resp, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	pcm := pcmOf(t, "librispeech-1089-134691-0000")
	for i := 0; i < len(pcm); i += 3200 {
		require.NoError(t, c.WriteMessage(websocket.BinaryMessage, pcm[i:min(i+3200, len(pcm))]))
	}
	require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte(`{"type":"end"}`)))
	evs := readEvents(t, c)
	final := evs[len(evs)-1]
	require.Equal(t, whisper.EventFinal, final["type"], "%v", final)
	require.NotEmpty(t, final["text"])
	require.InDelta(t, 2.1, final["audio_end"], 0.1)
	var committed strings.Builder
	for _, e := range evs[:len(evs)-1] {
		require.Contains(t, []any{whisper.EventCommitted, whisper.EventTentative}, e["type"])
		require.Contains(t, e, "wall")
		if e["type"] == whisper.EventCommitted {
			committed.WriteString(e["text"].(string))
		}
	}
	require.Equal(t, final["text"], strings.TrimSpace(committed.String()))
	_, _, err = c.ReadMessage()
	require.True(t, websocket.IsCloseError(err, websocket.CloseNormalClosure), "%v", err)

	// Bad input gets an error event and a policy close.
	for _, bad := range []struct {
		kind int
		data string
		want string
	}{
		{websocket.BinaryMessage, "abc", "even number of bytes"},
		{websocket.TextMessage, "hello", `{"type":"end"}`},
	} {
		c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
		require.NoError(t, err)
		require.NoError(t, c.WriteMessage(bad.kind, []byte(bad.data)))
		evs := readEvents(t, c)
		require.Equal(t, "error", evs[len(evs)-1]["type"])
		require.Contains(t, evs[len(evs)-1]["error"], bad.want)
		c.Close()
	}
}

// The handshake is refused before any upgrade: a foreign, "null" or
// non-http Origin gets 403, and so does a rebound Host on a server
// without a key, a missing key 401 (the key
// goes as a header, a "bearer.KEY" subprotocol or api_key), a missing or
// unknown model 400/404, a plain GET 400.
func TestAudioStreamHandshakeRules(t *testing.T) {
	_, base := startServer(t, Config{APIKey: "sekrit"})
	dial := func(query string, h http.Header) (*websocket.Conn, int) {
		c, resp, err := websocket.DefaultDialer.Dial(wsURL(base, query), h)
		if err != nil {
			require.ErrorIs(t, err, websocket.ErrBadHandshake)
			return nil, resp.StatusCode
		}
		return c, resp.StatusCode
	}
	key := http.Header{"Authorization": {"Bearer sekrit"}}
	for _, h := range []http.Header{
		{"Origin": {"http://evil.example"}},
		{"Origin": {"null"}},
		{"Origin": {"file://"}},
	} {
		h.Set("Authorization", "Bearer sekrit")
		_, code := dial("model=tiny", h)
		require.Equal(t, http.StatusForbidden, code, "%v", h)
	}
	// Without a key, a rebound Host is refused (DNS rebinding).
	_, open := startServer(t, Config{})
	_, resp, err := websocket.DefaultDialer.Dial(wsURL(open, "model=tiny"), http.Header{"Host": {"evil.example:8089"}})
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, code := dial("model=tiny", nil)
	require.Equal(t, http.StatusUnauthorized, code)
	_, code = dial("model=tiny&api_key=wrong", nil)
	require.Equal(t, http.StatusUnauthorized, code)
	_, code = dial("", key)
	require.Equal(t, http.StatusBadRequest, code)
	_, code = dial("model=nope", key)
	require.Equal(t, http.StatusNotFound, code)
	resp, err = http.Get(base + "/v1/audio/stream?model=tiny&api_key=sekrit")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	ok := []struct {
		query string
		h     http.Header
	}{
		{"model=tiny", http.Header{"Authorization": {"Bearer sekrit"}, "Origin": {"http://localhost:5173"}}},
		{"model=tiny&api_key=sekrit", nil},
		{"model=tiny", http.Header{"Sec-WebSocket-Protocol": {streamProtocol + ", bearer.sekrit"}}},
	}
	for _, o := range ok {
		c, code := dial(o.query, o.h)
		require.Equal(t, http.StatusSwitchingProtocols, code, "%v", o)
		if o.h.Get("Sec-WebSocket-Protocol") != "" {
			require.Equal(t, streamProtocol, c.Subprotocol())
		}
		require.NoError(t, c.WriteMessage(websocket.TextMessage, []byte(`{"type":"end"}`)))
		evs := readEvents(t, c)
		require.Equal(t, whisper.EventFinal, evs[len(evs)-1]["type"])
		require.Equal(t, "", evs[len(evs)-1]["text"])
		c.Close()
	}
}

// A single frame over the limit (11 s of audio, as a client that sends a
// whole clip at once) gets an error event naming the limit, then a 1009
// close whose reason says the same.
func TestAudioStreamFrameTooBig(t *testing.T) {
	_, base := startServer(t, Config{})
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base, "model=tiny"), nil)
	require.NoError(t, err)
	defer c.Close()
	pcm := pcmOf(t, "jfk")
	require.Greater(t, len(pcm), maxStreamFrame)
	require.NoError(t, c.WriteMessage(websocket.BinaryMessage, pcm))
	evs := readEvents(t, c)
	last := evs[len(evs)-1]
	require.Equal(t, "error", last["type"], "%v", evs)
	require.Contains(t, last["error"], "at most 10 s of audio (320000 bytes)")
	require.Contains(t, last["error"], "in chunks")
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, websocket.CloseMessageTooBig, ce.Code)
	require.Contains(t, ce.Text, "at most 10 s of audio")
}

package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
)

// pieceAnswer is a generation that emits pieces, then closes emitted.
type pieceAnswer struct {
	pieces  int
	emitted chan struct{}
}

func (p *pieceAnswer) answer(_ *chat.Session, _ context.Context, _ llm.GenerateOptions, emit func(string) error) (llm.Result, error) {
	var res llm.Result
	for i := range p.pieces {
		s := fmt.Sprint(i)
		if err := emit(s); err != nil {
			return res, err
		}
		res.Text += s
		res.Tokens = append(res.Tokens, int32(i))
	}
	close(p.emitted)
	res.Reason = llm.StopMaxTokens
	return res, nil
}

// heldFlusher is a client slow to take chunks: each flush waits until the
// generation has emitted everything. A flush from inside the generation's
// emit (found on the goroutine's stack) is an error, not a deadlock.
type heldFlusher struct {
	*httptest.ResponseRecorder
	t       *testing.T
	emitted chan struct{}
}

func (f *heldFlusher) Flush() {
	buf := make([]byte, 64<<10)
	if strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*pieceAnswer).answer") {
		f.t.Error("a chunk was written and flushed inside the generation's emit callback")
		return
	}
	<-f.emitted
	f.ResponseRecorder.Flush()
}

// The chunks of a stream are written off the generation's emit callback,
// so the decode never waits for the client: with every flush held until
// the generation has emitted all its pieces, the client still gets every
// chunk, in order, then the finish chunk and [DONE].
func TestStreamWritesOffTheChain(t *testing.T) {
	p := &pieceAnswer{pieces: chunkQueueLen / 2, emitted: make(chan struct{})}
	w := &heldFlusher{ResponseRecorder: httptest.NewRecorder(), t: t, emitted: p.emitted}
	g := generation{chat: true, params: genParams{Model: "m"}, answer: p.answer}
	(&Server{}).stream(w, context.Background(), nil, nil, g, "id", "chat.completion.chunk", 0)

	text, finish, events := streamEvents(t, w.Body.String())
	var want strings.Builder
	for i := range p.pieces {
		fmt.Fprint(&want, i)
	}
	require.Equal(t, want.String(), text)
	require.Equal(t, "length", finish)
	require.Equal(t, "[DONE]", events[len(events)-1])
	require.Len(t, events, p.pieces+3, "role chunk, one chunk a piece, the finish chunk, [DONE]")
}

// streamEvents reads a stream's body: the text of its content deltas, its
// finish reason and its events' data.
func streamEvents(t *testing.T, body string) (string, string, []string) {
	var text strings.Builder
	var finish string
	var events []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		events = append(events, data)
		if data == "[DONE]" {
			continue
		}
		var c completion[chatChoice]
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		require.Len(t, c.Choices, 1)
		if d := c.Choices[0].Delta; d != nil && d.Content != nil {
			text.WriteString(*d.Content)
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	return text.String(), finish, events
}

// countingFlusher records how many events the body held at each flush.
type countingFlusher struct {
	*httptest.ResponseRecorder
	at []int
}

func (f *countingFlusher) Flush() {
	f.at = append(f.at, strings.Count(f.Body.String(), "data: "))
	f.ResponseRecorder.Flush()
}

// With a stream interval, the tokens of one interval reach the client in
// one write, each still its own event: the role chunk and the first token
// at once, the other tokens of the (hour-long) interval when generation
// ends, then the finish chunk and [DONE] as they come.
func TestStreamGroupsTokenWrites(t *testing.T) {
	p := &pieceAnswer{pieces: 10, emitted: make(chan struct{})}
	w := &countingFlusher{ResponseRecorder: httptest.NewRecorder()}
	g := generation{chat: true, params: genParams{Model: "m"}, answer: p.answer}
	(&Server{cfg: Config{StreamInterval: time.Hour}}).stream(w, context.Background(), nil, nil, g, "id", "chat.completion.chunk", 0)

	text, finish, events := streamEvents(t, w.Body.String())
	require.Equal(t, "0123456789", text)
	require.Equal(t, "length", finish)
	require.Len(t, events, p.pieces+3, "role chunk, one chunk a piece, the finish chunk, [DONE]")
	require.Equal(t, []int{2, 11, 12, 13}, w.at)
}

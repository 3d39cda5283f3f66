package bridge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/harkapp/hark/internal/localhttp"
)

// event is what one server-sent message carries.
type event struct {
	Name string `json:"name"`
	Data any    `json:"data"`
}

// hub fans events out to the connected clients. A slow client loses
// events rather than stalling the services (level meters emit many).
type hub struct {
	mu      sync.Mutex
	clients map[chan []byte]struct{}
	closed  chan struct{}
	once    sync.Once
}

const clientBuffer = 256

func newHub() *hub { return &hub{clients: map[chan []byte]struct{}{}, closed: make(chan struct{})} }

func (h *hub) publish(name string, data any) {
	msg, err := json.Marshal(event{name, data})
	if err != nil {
		msg, _ = json.Marshal(event{name, map[string]string{"error": err.Error()}})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		select {
		case c <- msg:
		default:
		}
	}
}

func (h *hub) subscribe() chan []byte {
	c := make(chan []byte, clientBuffer)
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan []byte) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

func (h *hub) close() { h.once.Do(func() { close(h.closed) }) }

// heartbeat keeps idle connections (and proxies) from timing out.
const heartbeat = 15 * time.Second

func (b *Bridge) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, reply{Error: "streaming unsupported"})
		return
	}
	localhttp.Stream(w) // an event stream lasts as long as the page
	c := b.hub.subscribe()
	defer b.hub.unsubscribe(c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	fl.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case msg := <-c:
			if _, err := fmt.Fprintf(w, "data: %s\n\n", msg); err != nil {
				return
			}
			fl.Flush()
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-b.hub.closed:
			return
		}
	}
}

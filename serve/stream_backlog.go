package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/harkapp/hark/engine/whisper"
)

// maxStreamBacklog bounds the audio a stream's client has sent that the
// streamer has not taken yet. The socket is always read, so a client that
// leaves is seen at once; one that sends faster than the model
// transcribes gets an error instead of a growing buffer. A live source
// stays far below it: a minute is many decodes, even on a slow machine.
const maxStreamBacklog = time.Minute

// backlog queues a stream's audio between the socket reader and the
// streamer, bounded in samples.
type backlog struct {
	mu     sync.Mutex
	x      []float32
	n      int // samples queued or being handed over
	peak   int // the most n has been
	limit  int
	closed bool
	ready  chan struct{} // signalled when x grows or the queue closes
}

func newBacklog(limit time.Duration) *backlog {
	return &backlog{limit: int(limit.Seconds() * whisper.SampleRate), ready: make(chan struct{}, 1)}
}

// add queues x, or refuses it when the backlog would pass its limit.
func (b *backlog) add(x []float32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n+len(x) > b.limit {
		return fmt.Errorf("audio is arriving faster than it can be transcribed: more than %v of it is waiting; send it at most at real-time speed (a recording goes to /v1/audio/transcriptions)", maxStreamBacklog)
	}
	b.x = append(b.x, x...)
	b.n += len(x)
	b.peak = max(b.peak, b.n)
	b.signal()
	return nil
}

// close marks the end of the audio.
func (b *backlog) close() {
	b.mu.Lock()
	b.closed = true
	b.signal()
	b.mu.Unlock()
}

func (b *backlog) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// Peak is the most audio the backlog held, in samples.
func (b *backlog) Peak() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// forward hands the queued audio to in, all that waits at each send,
// and closes in after the last once the queue is closed (or ctx ends).
func (b *backlog) forward(ctx context.Context, in chan<- []float32) {
	defer close(in)
	for {
		select {
		case <-b.ready:
		case <-ctx.Done():
			return
		}
		b.mu.Lock()
		x, closed := b.x, b.closed
		b.x = nil
		b.mu.Unlock()
		if len(x) > 0 {
			select {
			case in <- x:
			case <-ctx.Done():
				return
			}
			b.mu.Lock()
			b.n -= len(x)
			b.mu.Unlock()
		}
		if closed {
			b.mu.Lock()
			done := len(b.x) == 0
			b.mu.Unlock()
			if done {
				return
			}
			b.signal()
		}
	}
}

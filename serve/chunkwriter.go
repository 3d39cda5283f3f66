package serve

import "time"

// chunkQueueLen bounds the chunks a stream holds for its writer: past it a
// client slower than the model holds the generation back (memory stays
// bounded) instead of each token waiting for its own write.
const chunkQueueLen = 64

// DefaultStreamInterval is the least time between two flushes of a
// stream's text chunks. Every token is still its own event; the events of
// one interval reach the client in one write. A client pays for each read
// it wakes for (the official Node client about 0.3-0.45 ms), and on a
// machine whose cores the model fills that time is taken from the decode,
// several times over (a worker it preempts holds the others at the next
// barrier). On the 2-core machine, streamed chat through the official
// client against two servers side by side, 100 ms against 20 ms: 1.05x
// and 1.03x by the medians of paired rounds (ahead in 26 of 40 and 23 of
// 35), the client's CPU 0.09-0.10 against 0.22-0.27 ms a token
// (BENCHMARKS.md, "Serve on the CPU, the two speed levels"). A tenth of a
// second keeps the text moving at reading pace; the first token and the
// end of the stream go out at once.
const DefaultStreamInterval = 100 * time.Millisecond

// chunkWriter runs a stream's chunk writes, in order, on a goroutine of
// their own, and flushes them at most once an interval: the first chunk at
// once, later ones when the interval since the last flush has passed, the
// rest when the queue ends. After a failed write or flush (the client
// left) it runs nothing more, and put returns that error so generation
// stops.
type chunkWriter struct {
	q        chan func() error
	flush    func() error
	interval time.Duration
	fail     chan struct{} // closed once a write failed; err is set before
	exit     chan struct{} // closed when the writer returned
	err      error
}

// newChunkWriter starts a writer of at most n queued chunks; flush sends
// what the chunks wrote (interval ≤ 0: after every chunk).
func newChunkWriter(n int, flush func() error, interval time.Duration) *chunkWriter {
	c := &chunkWriter{q: make(chan func() error, n), flush: flush, interval: interval, fail: make(chan struct{}), exit: make(chan struct{})}
	go c.run()
	return c
}

func (c *chunkWriter) run() {
	defer close(c.exit)
	if err := c.write(); err != nil {
		c.err = err
		close(c.fail)
	}
}

// write runs the queued writes until the queue ends or one fails.
func (c *chunkWriter) write() error {
	var last time.Time // of the last flush; zero: the first chunk goes at once
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		f, ok := <-c.q
		if !ok {
			return nil
		}
		if err := f(); err != nil {
			return err
		}
		// Write what comes until the interval since the last flush is
		// over, then flush it all.
		if wait := c.interval - time.Since(last); wait > 0 {
			timer.Reset(wait)
		gather:
			for {
				select {
				case f, ok := <-c.q:
					if !ok {
						return c.flush()
					}
					if err := f(); err != nil {
						return err
					}
				case <-timer.C:
					break gather
				}
			}
		}
		if err := c.flush(); err != nil {
			return err
		}
		last = time.Now()
	}
}

// put queues a write, waiting while the queue is full; it returns the
// error of a write that failed before.
func (c *chunkWriter) put(f func() error) error {
	select {
	case <-c.fail:
		return c.err
	default:
	}
	select {
	case c.q <- f:
		return nil
	case <-c.fail:
		return c.err
	}
}

// wait ends the queue, returns when every queued write ran and was
// flushed (or one failed), and gives the failure.
func (c *chunkWriter) wait() error {
	close(c.q)
	<-c.exit
	return c.err
}

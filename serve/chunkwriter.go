package serve

// chunkQueueLen bounds the chunks a stream holds for its writer: past it a
// client slower than the model holds the generation back (memory stays
// bounded) instead of each token waiting for its own write.
const chunkQueueLen = 64

// chunkWriter runs a stream's chunk writes, in order, on a goroutine of
// their own. After a failed write (the client left) it runs nothing more,
// and put returns that error so generation stops.
type chunkWriter struct {
	q    chan func() error
	fail chan struct{} // closed once a write failed; err is set before
	exit chan struct{} // closed when the writer returned
	err  error
}

func newChunkWriter(n int) *chunkWriter {
	c := &chunkWriter{q: make(chan func() error, n), fail: make(chan struct{}), exit: make(chan struct{})}
	go c.run()
	return c
}

func (c *chunkWriter) run() {
	defer close(c.exit)
	for f := range c.q {
		if err := f(); err != nil {
			c.err = err
			close(c.fail)
			return
		}
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

// wait ends the queue, returns when every queued write ran (or one
// failed), and gives the failure.
func (c *chunkWriter) wait() error {
	close(c.q)
	<-c.exit
	return c.err
}

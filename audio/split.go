package audio

// Split reads a multi-channel stream as one mono stream a channel, from a
// single decode: a meeting's gate reads both channels of its recording in
// step, and opening the file once a channel decoded it twice.

// splitBlock is the frames a Split reads from its source at a time.
const splitBlock = 4096

// split is the source the channels of Split share.
type split struct {
	src    Stream
	buf    []float32
	pend   [][]float32 // each channel's samples decoded, not yet read
	err    error       // the source's, once it has one
	closed bool
}

// splitChannel is one channel of a split.
type splitChannel struct {
	s *split
	i int
}

// Split returns each channel of src as a mono stream. They share src: a
// channel read ahead of another holds the other's samples until they are
// read, so read them in step (or memory grows by what one is ahead);
// closing any closes src.
func Split(src Stream) []Stream {
	s := &split{src: src, pend: make([][]float32, src.Channels())}
	out := make([]Stream, src.Channels())
	for i := range out {
		out[i] = &splitChannel{s: s, i: i}
	}
	return out
}

func (c *splitChannel) SampleRate() int { return c.s.src.SampleRate() }
func (c *splitChannel) Channels() int   { return 1 }
func (c *splitChannel) Format() string  { return c.s.src.Format() }

func (c *splitChannel) Close() error {
	if c.s.closed {
		return nil
	}
	c.s.closed = true
	return c.s.src.Close()
}

func (c *splitChannel) Read(p []float32) (int, error) {
	s := c.s
	for len(s.pend[c.i]) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	n := copy(p, s.pend[c.i])
	s.pend[c.i] = s.pend[c.i][:copy(s.pend[c.i], s.pend[c.i][n:])]
	return n, nil
}

// fill decodes the source's next block into every channel's pending
// samples.
func (s *split) fill() {
	ch := len(s.pend)
	if s.buf == nil {
		s.buf = make([]float32, splitBlock*ch)
	}
	n, err := ReadSome(s.src, s.buf)
	for f := range n {
		for i := range s.pend {
			s.pend[i] = append(s.pend[i], s.buf[f*ch+i])
		}
	}
	if err != nil {
		s.err = err
	}
}

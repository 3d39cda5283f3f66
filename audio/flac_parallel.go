package audio

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"sync"

	"github.com/mewkiz/flac/frame"
)

// FLAC frames are independent of each other, but mewkiz/flac decodes them
// one after another, and a transcription waits for the whole file's
// spectrogram (its clamp needs the global maximum). On the 16-core device
// the serial decode of a 204-s excerpt was a fixed cost that did not shrink
// with the thread count (issue #37). flacFrames reads the file in batches,
// lets one goroutine per segment of a batch find the first frame at or
// after its segment's start and decode from there, then chains the frames
// from the batch's known first frame: each frame is taken from the workers
// only where one started at exactly the byte where the previous frame
// ended, and decoded on the caller otherwise. The frames, their order and
// the errors are then those of the serial decode, whatever a worker found
// (a false sync code costs a serial decode, never a wrong sample).

// flacSegment is the bytes of a batch per worker (a frame of 16-bit audio
// at 16-48 kHz is 2-20 KB: every segment holds many), at most: with many
// workers a batch is kept near flacBatchBytes, so that a file has several and
// the spectrogram of one runs while the next decodes (at 16 workers the
// 3.7-MB excerpt of issue #37 was one batch, and its log-mel could only
// start once the whole file was decoded).
const (
	flacSegment    = 256 << 10
	flacBatchBytes = 1 << 20
	flacMinSegment = 32 << 10
)

// flacSegmentFor is the segment of workers' batches.
func flacSegmentFor(workers int) int {
	return max(flacMinSegment, min(flacSegment, flacBatchBytes/workers))
}

// flacMaxBatch bounds a batch grown to hold one frame: past it a frame that
// fails to decode is corrupt, not cut by the batch's end. The format's
// largest frame (65,535 samples × 8 channels × 32 bits, verbatim) is 2 MiB.
const flacMaxBatch = 16 << 20

// flacFrames yields a FLAC file's frames in order, decoded in parallel,
// each with its samples as float32s where the stream's Read takes them
// (converted on the workers). While the caller reads a batch, the next one
// decodes.
type flacFrames struct {
	f       *os.File
	pos     int64 // file offset of the next frame not decoded
	size    int64
	workers int
	segment int // flacSegmentFor(workers); tests set it
	ch      int
	scale   float32
	ready   []flacSpan     // decoded, not yet returned
	err     error          // what follows ready: io.EOF or the decode's error
	ahead   chan flacBatch // the next batch, decoding; nil: none
	bufs    [2][]byte      // the batches' bytes, one decoding while one is read
	turn    int
}

// flacBatch is a decoded batch: its frames, the offset after them, and
// the error that ends the stream there (nil: more batches follow).
type flacBatch struct {
	frames []flacSpan
	pos    int64
	err    error
}

// newFLACFrames returns the parallel decoder of f's frames, or nil where
// the serial one must stay: one worker, a file that does not start with
// the FLAC signature (an ID3v2 tag: mewkiz/flac skips it itself), or
// metadata it cannot walk. ch and scale are the stream's: a frame of ch
// channels is converted to interleaved samples × scale on the workers.
func newFLACFrames(f *os.File, workers, ch int, scale float32) *flacFrames {
	if workers < 2 {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	start, ok := flacDataStart(f, st.Size())
	if !ok {
		return nil
	}
	return &flacFrames{f: f, pos: start, size: st.Size(), workers: workers, segment: flacSegmentFor(workers), ch: ch, scale: scale}
}

// flacWorkers is how many goroutines decode a FLAC file: the cores the
// process may use.
func flacWorkers() int { return runtime.GOMAXPROCS(0) }

// flacDataStart is the offset of the first frame: after "fLaC" and the
// metadata blocks (a 4-byte header each: last-block flag, type, 24-bit
// length).
func flacDataStart(f *os.File, size int64) (int64, bool) {
	var h [4]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:]) != "fLaC" {
		return 0, false
	}
	off := int64(4)
	for {
		if _, err := f.ReadAt(h[:], off); err != nil {
			return 0, false
		}
		off += 4 + int64(binary.BigEndian.Uint32(h[:])&0xFFFFFF)
		if off > size {
			return 0, false
		}
		if h[0]&0x80 != 0 {
			return off, true
		}
	}
}

// next returns the next frame and, where the workers converted it, its
// interleaved samples (else nil: the caller converts and checks the
// frame), or io.EOF after the last, or the error the serial decode would
// give at the same frame.
func (d *flacFrames) next() (*frame.Frame, []float32, error) {
	for len(d.ready) == 0 {
		if d.err != nil {
			return nil, nil, d.err
		}
		d.fill()
	}
	s := d.ready[0]
	d.ready[0] = flacSpan{}
	d.ready = d.ready[1:]
	return s.fr, s.pcm, nil
}

// fill takes the next batch into ready, or sets err, and starts decoding
// the one after it.
func (d *flacFrames) fill() {
	var b flacBatch
	if d.ahead != nil {
		b = <-d.ahead
		d.ahead = nil
	} else {
		b = d.batchAt(d.pos, &d.bufs[d.turn])
	}
	d.ready, d.pos, d.err = b.frames, b.pos, b.err
	if d.err == nil {
		d.turn ^= 1
		c, pos, buf := make(chan flacBatch, 1), d.pos, &d.bufs[d.turn]
		d.ahead = c
		go func() { c <- d.batchAt(pos, buf) }()
	}
}

// batchAt decodes the batch of frames from pos, reading into *buf. It
// touches no field of d but the constant ones, so it runs beside the
// caller's reading of the previous batch.
func (d *flacFrames) batchAt(pos int64, buf *[]byte) flacBatch {
	size := d.workers * d.segment
	for {
		n := int(min(int64(size), d.size-pos))
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		b := (*buf)[:n]
		if _, err := d.f.ReadAt(b, pos); err != nil && n > 0 {
			return flacBatch{pos: pos, err: err}
		}
		last := pos+int64(n) == d.size
		frames, used, err := decodeFLACBatch(b, d.workers, size/d.workers, d.ch, d.scale)
		out := flacBatch{frames: frames, pos: pos + int64(used)}
		switch {
		case last:
			out.err = err // what the serial decode meets at the file's end
			return out
		case len(frames) > 0:
			return out // the next batch starts at the frame the batch's end cut
		case n >= flacMaxBatch:
			out.err = err // a frame that fails with megabytes after it
			return out
		}
		size *= 2 // a frame longer than the batch
	}
}

// flacSpan is a frame a worker decoded and the bytes it took; where the
// worker converted its samples, pcm holds them and fr is dropped.
type flacSpan struct {
	fr       *frame.Frame
	pcm      []float32
	from, to int
}

// decodeFLACBatch decodes the frames of buf from its start, the first of
// them at offset 0, with workers goroutines over segments of seg bytes. It
// returns the chained frames, the bytes they take, and the error of the
// decode at the chain's end (io.EOF where the chain ends with buf).
func decodeFLACBatch(buf []byte, workers, seg, ch int, scale float32) ([]flacSpan, int, error) {
	found := make([][]flacSpan, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*seg, min(len(buf), (w+1)*seg)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[w] = scanFLACSegment(buf, lo, hi)
			for i := range found[w] {
				sp := &found[w][i]
				if sp.pcm = flacSamples(sp.fr, ch, scale); sp.pcm != nil {
					sp.fr = nil
				}
			}
		}()
	}
	wg.Wait()
	at := make(map[int]flacSpan)
	for _, spans := range found {
		for _, s := range spans {
			at[s.from] = s
		}
	}
	var frames []flacSpan
	off := 0
	for {
		s, ok := at[off]
		if !ok {
			fr, to, err := parseFLACAt(buf, off)
			if err != nil {
				return frames, off, err
			}
			s = flacSpan{fr: fr, from: off, to: to}
		}
		frames = append(frames, s)
		off = s.to
	}
}

// scanFLACSegment decodes the frames starting in [lo, hi) from the first
// offset where one decodes (frame 0 where lo is 0): a sync code, a valid
// header, subframes and CRC-16. A panic of the decoder on what was not a
// frame ends the worker's list; the caller decodes there itself, under the
// guard that turns a panic into an error.
func scanFLACSegment(buf []byte, lo, hi int) (spans []flacSpan) {
	defer func() {
		if recover() != nil {
			spans = nil
		}
	}()
	off := lo
	for ; off < hi; off++ {
		if lo > 0 && (buf[off] != 0xFF || off+1 >= len(buf) || buf[off+1]&0xFE != 0xF8) {
			continue
		}
		fr, to, err := parseFLACAt(buf, off)
		if err == nil {
			spans = append(spans, flacSpan{fr: fr, from: off, to: to})
			off = to
			break
		}
		if lo == 0 {
			return nil
		}
	}
	for off < hi {
		fr, to, err := parseFLACAt(buf, off)
		if err != nil {
			break
		}
		spans = append(spans, flacSpan{fr: fr, from: off, to: to})
		off = to
	}
	return spans
}

// parseFLACAt decodes the frame at buf[off:] and returns where it ends.
// The reader ends where buf does, so at a file's end the errors are the
// serial decode's (io.EOF where buf ends at off).
func parseFLACAt(buf []byte, off int) (*frame.Frame, int, error) {
	r := bytes.NewReader(buf[off:])
	fr, err := frame.Parse(r)
	if err != nil {
		return nil, off, err
	}
	return fr, len(buf) - r.Len(), nil
}

// flacSamples is fr's samples interleaved and scaled as flacStream.Read
// converts them, or nil where fr is not a frame of ch channels with a
// whole block in each (Read then converts it, or says what is wrong).
func flacSamples(fr *frame.Frame, ch int, scale float32) []float32 {
	n := int(fr.BlockSize)
	if len(fr.Subframes) != ch {
		return nil
	}
	for _, sub := range fr.Subframes {
		if len(sub.Samples) < n {
			return nil
		}
	}
	out := make([]float32, n*ch)
	for c, sub := range fr.Subframes {
		for i, v := range sub.Samples[:n] {
			out[i*ch+c] = float32(v) * scale
		}
	}
	return out
}

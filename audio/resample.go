package audio

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Resampler design. The output is band-limited interpolation of the input:
// y(t) = sum_k x[k] h(t-k), t = n*inRate/outRate, with h a Kaiser-windowed
// sinc. Its passband ends at 90% and its stopband (>= stopbandDB) starts at
// 100% of the lower Nyquist frequency, so nothing above 8 kHz aliases into a
// 16 kHz output, and upsampling images are removed. h is zero-phase: output
// sample n is aligned with input time t, no delay to compensate.
const (
	stopbandDB  = 80
	passbandEnd = 0.90
	// maxExactPhases bounds the filter table: up to this many phases (the
	// reduced output-rate numerator L) get an exact row each; beyond it the
	// table holds this many rows and interpolates linearly between them.
	maxExactPhases = 1024
)

// polyphase is the precomputed filter for one rate pair.
type polyphase struct {
	l, m   int64 // outRate/g, inRate/g: output n sits at input time n*m/l
	taps   int   // per phase, even
	half   int   // taps/2
	rows   int   // phases in the table (l, or maxExactPhases interpolated)
	exact  bool
	coeffs []float32 // (rows+1) rows of taps
}

func kaiserBeta(a float64) float64 {
	switch {
	case a > 50:
		return 0.1102 * (a - 8.7)
	case a >= 21:
		return 0.5842*math.Pow(a-21, 0.4) + 0.07886*(a-21)
	}
	return 0
}

// besselI0 is the modified Bessel function of order 0 (power series; it
// converges quickly for the betas used here).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 200; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func newPolyphase(inRate, outRate int) (*polyphase, error) {
	if inRate < minSampleRate || inRate > maxSampleRate || outRate < minSampleRate || outRate > maxSampleRate {
		return nil, fmt.Errorf("audio: cannot resample %d Hz to %d Hz (rates must be %d..%d Hz)", inRate, outRate, minSampleRate, maxSampleRate)
	}
	g := gcd(inRate, outRate)
	p := &polyphase{l: int64(outRate / g), m: int64(inRate / g)}
	// Band edge, transition width and cutoff in cycles per input sample.
	band := float64(min(inRate, outRate)) / 2 / float64(inRate)
	width := (1 - passbandEnd) * band
	cutoff := (1 + passbandEnd) / 2 * band
	// Kaiser's length estimate for the attenuation and transition width.
	n := (stopbandDB - 7.95) / (2.285 * 2 * math.Pi * width)
	p.half = int(math.Ceil(n/2)) + 1
	p.taps = 2 * p.half
	beta := kaiserBeta(stopbandDB)
	i0b := besselI0(beta)
	p.rows, p.exact = int(p.l), true
	if p.l > maxExactPhases {
		p.rows, p.exact = maxExactPhases, false
	}
	p.coeffs = make([]float32, (p.rows+1)*p.taps)
	row := make([]float64, p.taps)
	for r := 0; r <= p.rows; r++ {
		phase := float64(r) / float64(p.rows)
		var sum float64
		for j := range row {
			// Distance from output time to tap k = i-half+1+j.
			d := phase + float64(p.half-1-j)
			u := d / float64(p.half)
			w := 0.0
			if u > -1 && u < 1 {
				w = besselI0(beta*math.Sqrt(1-u*u)) / i0b
			}
			x := 2 * cutoff * d
			s := 1.0
			if x != 0 {
				s = math.Sin(math.Pi*x) / (math.Pi * x)
			}
			row[j] = 2 * cutoff * s * w
			sum += row[j]
		}
		// Unit DC gain for every phase, exactly.
		for j, v := range row {
			p.coeffs[r*p.taps+j] = float32(v / sum)
		}
	}
	return p, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// resampleStream converts a mono stream's rate as it is read.
type resampleStream struct {
	src     Stream
	rate    int
	p       *polyphase
	buf     []float32 // input samples base .. base+len(buf)-1
	base    int64
	i, frac int64 // next output at input time i + frac/l
	eof     bool
	inLen   int64 // input samples read so far (the total once eof)
	empty   int   // consecutive empty source reads
	row     []float32
	chunk   []float32
}

// Resample converts a mono stream to outRate with the band-limited
// polyphase filter described above.
func Resample(src Stream, outRate int) (Stream, error) {
	if src.Channels() != 1 {
		return nil, fmt.Errorf("audio: Resample needs mono input, got %d channels", src.Channels())
	}
	p, err := newPolyphase(src.SampleRate(), outRate)
	if err != nil {
		return nil, err
	}
	s := &resampleStream{src: src, rate: outRate, p: p, row: make([]float32, p.taps), chunk: make([]float32, 8192)}
	// Zeros before the first sample, so early outputs see x[k<0] = 0.
	s.buf = make([]float32, p.half-1, 1<<15)
	s.base = -int64(p.half - 1)
	return s, nil
}

func (s *resampleStream) SampleRate() int { return s.rate }
func (s *resampleStream) Channels() int   { return 1 }
func (s *resampleStream) Format() string  { return s.src.Format() }
func (s *resampleStream) Close() error    { return s.src.Close() }

// fill reads more input; at the end it appends the zeros the last outputs'
// taps reach into.
func (s *resampleStream) fill() error {
	n, err := s.src.Read(s.chunk)
	if n == 0 && err == nil {
		if s.empty++; s.empty >= maxEmptyReads {
			return errors.New("audio: source makes no progress")
		}
	} else {
		s.empty = 0
	}
	if n > 0 {
		s.buf = append(s.buf, s.chunk[:n]...)
		s.inLen += int64(n)
	}
	if err == io.EOF {
		s.eof = true
		s.buf = append(s.buf, make([]float32, s.p.half)...)
		return nil
	}
	return err
}

func (s *resampleStream) Read(out []float32) (int, error) {
	if len(out) == 0 {
		return 0, errors.New("audio: Read buffer smaller than one frame")
	}
	p := s.p
	n := 0
	for n < len(out) {
		if s.eof && s.i >= s.inLen {
			break
		}
		// Outputs need x up to i+half.
		if s.i+int64(p.half) >= s.base+int64(len(s.buf)) {
			if s.eof {
				break // cannot happen: eof appended half zeros
			}
			s.compact()
			if err := s.fill(); err != nil {
				return n, err
			}
			continue
		}
		avail := s.base + int64(len(s.buf)) - int64(p.half) // outputs with i < avail are computable
		for n < len(out) && s.i < avail && !(s.eof && s.i >= s.inLen) {
			x := s.buf[s.i-int64(p.half)+1-s.base:]
			x = x[:p.taps]
			out[n] = dot(s.coeffRow(), x)
			n++
			s.frac += p.m
			s.i += s.frac / p.l
			s.frac %= p.l
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// coeffRow returns the filter taps for the current phase frac/l.
func (s *resampleStream) coeffRow() []float32 {
	p := s.p
	if p.exact {
		return p.coeffs[int(s.frac)*p.taps : (int(s.frac)+1)*p.taps]
	}
	pos := float64(s.frac) / float64(p.l) * float64(p.rows)
	r := int(pos)
	a := float32(pos - float64(r))
	r0 := p.coeffs[r*p.taps : (r+1)*p.taps]
	r1 := p.coeffs[(r+1)*p.taps : (r+2)*p.taps]
	for j := range s.row {
		s.row[j] = r0[j] + a*(r1[j]-r0[j])
	}
	return s.row
}

// compact drops input no future output can reach.
func (s *resampleStream) compact() {
	keep := s.i - int64(s.p.half) + 1 // first index still needed
	drop := int(keep - s.base)
	if drop <= 0 || drop < len(s.buf)/2 {
		return
	}
	m := copy(s.buf, s.buf[drop:])
	s.buf = s.buf[:m]
	s.base = keep
}

// dot is the filter's inner product; taps is even, and four partial sums
// break the add dependency chain (about 2x faster than one).
func dot(c, x []float32) float32 {
	x = x[:len(c)]
	var a0, a1, a2, a3 float32
	j := 0
	for ; j+4 <= len(c); j += 4 {
		a0 += c[j] * x[j]
		a1 += c[j+1] * x[j+1]
		a2 += c[j+2] * x[j+2]
		a3 += c[j+3] * x[j+3]
	}
	for ; j < len(c); j++ {
		a0 += c[j] * x[j]
	}
	return (a0 + a1) + (a2 + a3)
}

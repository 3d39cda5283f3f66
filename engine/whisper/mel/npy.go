package mel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// npyArray is a float array read from NumPy's .npy format.
type npyArray struct {
	shape []int
	data  []float32
}

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// maxNPYElems bounds what a header may claim (mel filters are ~26k floats).
const maxNPYElems = 1 << 24

// readNPY parses a little-endian float32/float64 C-order .npy (versions 1-3).
// size is the byte length of the whole file, used to reject headers that
// promise more data than there is.
func readNPY(r io.Reader, size int64) (*npyArray, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: truncated preamble: %w", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: bad magic")
	}
	var hlen int64
	var rest int64
	switch pre[6] {
	case 1:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:]))
		rest = 10
	case 2, 3:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: truncated preamble: %w", err)
		}
		hlen = int64(binary.LittleEndian.Uint32(append(pre[8:10:10], b[:]...)))
		rest = 12
	default:
		return nil, fmt.Errorf("npy: unsupported version %d", pre[6])
	}
	if hlen > 1<<16 || rest+hlen > size {
		return nil, fmt.Errorf("npy: bad header length %d", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("npy: truncated header: %w", err)
	}
	h := string(hdr)
	d := npyDescr.FindStringSubmatch(h)
	o := npyOrder.FindStringSubmatch(h)
	s := npyShape.FindStringSubmatch(h)
	if d == nil || o == nil || s == nil {
		return nil, fmt.Errorf("npy: cannot parse header %q", strings.TrimSpace(h))
	}
	if o[1] != "False" {
		return nil, errors.New("npy: Fortran order is not supported")
	}
	var elem int
	switch d[1] {
	case "<f4":
		elem = 4
	case "<f8":
		elem = 8
	default:
		return nil, fmt.Errorf("npy: unsupported dtype %q (want <f4 or <f8)", d[1])
	}
	a := &npyArray{}
	count := 1
	for _, f := range strings.Split(s[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v > maxNPYElems {
			return nil, fmt.Errorf("npy: bad shape %q", s[1])
		}
		a.shape = append(a.shape, v)
		count *= v
		if count > maxNPYElems {
			return nil, fmt.Errorf("npy: array too large (%s)", s[1])
		}
	}
	if int64(count*elem) != size-rest-hlen {
		return nil, fmt.Errorf("npy: shape (%s) needs %d bytes of data, file has %d", s[1], count*elem, size-rest-hlen)
	}
	raw := make([]byte, count*elem)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("npy: truncated data: %w", err)
	}
	a.data = make([]float32, count)
	for i := range a.data {
		if elem == 4 {
			a.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		} else {
			a.data[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	}
	return a, nil
}

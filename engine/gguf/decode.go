package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/internal/binread"
)

// maxDepth bounds nesting of arrays of arrays; real files use at most one
// level, and the bound keeps hostile files from recursing deeply.
const maxDepth = 8

// maxPrealloc caps capacity reserved from a count read from the file;
// beyond it slices grow only as entries are actually decoded.
const maxPrealloc = 1 << 10

// decoder reads little-endian GGUF fields from an in-memory file. Every
// read is checked against the bytes left, and every count is checked
// against what those bytes could hold before anything is allocated, so a
// hostile header cannot cause an allocation larger than a small multiple
// of the file size.
type decoder struct{ binread.Reader }

func (d *decoder) count(minSize int, what string) (int, error) {
	at := d.Pos
	n, err := d.U64(what)
	if err != nil {
		return 0, err
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(d.Remaining()/minSize) {
		return 0, fmt.Errorf("%s %d at offset %d is larger than the rest of the file allows", what, n, at)
	}
	return int(n), nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.count(1, what+" length")
	if err != nil {
		return "", err
	}
	s, err := d.Take(n, what)
	return string(s), err
}

func (d *decoder) valueType(what string) (ValueType, error) {
	at := d.Pos
	t, err := d.U32(what)
	if err != nil {
		return 0, err
	}
	if !ValueType(t).Valid() {
		return 0, fmt.Errorf("unknown metadata value type %d at offset %d", t, at)
	}
	return ValueType(t), nil
}

func (d *decoder) value(t ValueType, depth int) (Value, error) {
	switch t {
	case TypeString:
		s, err := d.str("string")
		return String(s), err
	case TypeArray:
		a, err := d.array(depth + 1)
		return ArrayValue(a), err
	}
	s, err := d.Take(t.fixedSize(), t.String())
	if err != nil {
		return Value{}, err
	}
	var bits uint64
	switch len(s) {
	case 1:
		bits = uint64(s[0])
	case 2:
		bits = uint64(binary.LittleEndian.Uint16(s))
	case 4:
		bits = uint64(binary.LittleEndian.Uint32(s))
	case 8:
		bits = binary.LittleEndian.Uint64(s)
	}
	if t == TypeBool && bits > 1 {
		return Value{}, fmt.Errorf("invalid bool value %d at offset %d", bits, d.Pos-1)
	}
	return scalar(t, bits), nil
}

func (d *decoder) array(depth int) (*Array, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("arrays nested deeper than %d at offset %d", maxDepth, d.Pos)
	}
	elem, err := d.valueType("array element type")
	if err != nil {
		return nil, err
	}
	n, err := d.count(elem.minSize(), "array length")
	if err != nil {
		return nil, err
	}
	// Strings and arrays grow as they are read: their Go form is larger
	// than their smallest encoding, so a corrupt count in a large file
	// must not size the allocation.
	switch elem {
	case TypeString:
		v := make([]string, 0, min(n, maxPrealloc))
		for range n {
			s, err := d.str("string")
			if err != nil {
				return nil, err
			}
			v = append(v, s)
		}
		return &Array{Elem: elem, data: v}, nil
	case TypeArray:
		v := make([]*Array, 0, min(n, maxPrealloc))
		for range n {
			a, err := d.array(depth + 1)
			if err != nil {
				return nil, err
			}
			v = append(v, a)
		}
		return &Array{Elem: elem, data: v}, nil
	}
	raw, err := d.Take(n*elem.fixedSize(), "array data")
	if err != nil {
		return nil, err
	}
	return decodeNumbers(elem, raw, n)
}

// decodeNumbers converts n little-endian fixed-size elements.
func decodeNumbers(t ValueType, raw []byte, n int) (*Array, error) {
	le := binary.LittleEndian
	var data any
	switch t {
	case TypeUint8:
		data = append([]uint8(nil), raw...)
	case TypeInt8:
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(raw[i])
		}
		data = v
	case TypeBool:
		v := make([]bool, n)
		for i := range v {
			if raw[i] > 1 {
				return nil, fmt.Errorf("invalid bool value %d in array", raw[i])
			}
			v[i] = raw[i] == 1
		}
		data = v
	case TypeUint16:
		v := make([]uint16, n)
		for i := range v {
			v[i] = le.Uint16(raw[2*i:])
		}
		data = v
	case TypeInt16:
		v := make([]int16, n)
		for i := range v {
			v[i] = int16(le.Uint16(raw[2*i:]))
		}
		data = v
	case TypeUint32:
		v := make([]uint32, n)
		for i := range v {
			v[i] = le.Uint32(raw[4*i:])
		}
		data = v
	case TypeInt32:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(le.Uint32(raw[4*i:]))
		}
		data = v
	case TypeFloat32:
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		data = v
	case TypeUint64:
		v := make([]uint64, n)
		for i := range v {
			v[i] = le.Uint64(raw[8*i:])
		}
		data = v
	case TypeInt64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(le.Uint64(raw[8*i:]))
		}
		data = v
	case TypeFloat64:
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		data = v
	}
	return &Array{Elem: t, data: data}, nil
}

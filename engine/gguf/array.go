package gguf

import (
	"fmt"
	"math"
	"reflect"
	"slices"
)

// Array is a metadata array: every element has type Elem. Arrays of arrays
// hold *Array elements, each with its own element type.
type Array struct {
	Elem ValueType
	// data is a []uint8, []int8, []uint16, []int16, []uint32, []int32,
	// []float32, []bool, []string, []*Array, []uint64, []int64 or []float64
	// matching Elem.
	data any
}

// Element is the Go type of an array element.
type Element interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | *Array | uint64 | int64 | float64
}

// elemTypes maps each slice type an Array may hold (see Element) to its
// element type.
var elemTypes = map[reflect.Type]ValueType{
	reflect.TypeFor[[]uint8]():   TypeUint8,
	reflect.TypeFor[[]int8]():    TypeInt8,
	reflect.TypeFor[[]uint16]():  TypeUint16,
	reflect.TypeFor[[]int16]():   TypeInt16,
	reflect.TypeFor[[]uint32]():  TypeUint32,
	reflect.TypeFor[[]int32]():   TypeInt32,
	reflect.TypeFor[[]float32](): TypeFloat32,
	reflect.TypeFor[[]bool]():    TypeBool,
	reflect.TypeFor[[]string]():  TypeString,
	reflect.TypeFor[[]*Array]():  TypeArray,
	reflect.TypeFor[[]uint64]():  TypeUint64,
	reflect.TypeFor[[]int64]():   TypeInt64,
	reflect.TypeFor[[]float64](): TypeFloat64,
}

// NewArray makes an array from a typed slice (not copied).
func NewArray[T Element](values []T) *Array {
	if values == nil {
		values = []T{}
	}
	return &Array{Elem: elemTypes[reflect.TypeFor[[]T]()], data: values}
}

// NewArrayOf is NewArray for a slice held in an interface; it returns an
// array with no data (rejected by the writer) for other types.
func NewArrayOf(values any) *Array {
	t, ok := elemTypes[reflect.TypeOf(values)]
	if !ok {
		return &Array{Elem: math.MaxUint32}
	}
	if v := reflect.ValueOf(values); v.IsNil() {
		values = reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	return &Array{Elem: t, data: values}
}

// Values returns the elements when the array holds elements of Go type T;
// for example Values[string](a) for a token list. The slice is shared.
func Values[T Element](a *Array) ([]T, bool) {
	if a == nil {
		return nil, false
	}
	v, ok := a.data.([]T)
	return v, ok
}

// Typed views for the common cases; ok is false for other element types.

func (a *Array) Strings() ([]string, bool)   { return Values[string](a) }
func (a *Array) Float32s() ([]float32, bool) { return Values[float32](a) }
func (a *Array) Int32s() ([]int32, bool)     { return Values[int32](a) }
func (a *Array) Uint32s() ([]uint32, bool)   { return Values[uint32](a) }
func (a *Array) Arrays() ([]*Array, bool)    { return Values[*Array](a) }

// Len is the number of elements.
func (a *Array) Len() int {
	if a == nil || a.data == nil {
		return 0
	}
	return reflect.ValueOf(a.data).Len()
}

// Any returns the underlying typed slice.
func (a *Array) Any() any {
	if a == nil {
		return nil
	}
	return a.data
}

// Index returns element i as a Value.
func (a *Array) Index(i int) Value {
	switch d := a.data.(type) {
	case []uint8:
		return Uint8(d[i])
	case []int8:
		return Int8(d[i])
	case []uint16:
		return Uint16(d[i])
	case []int16:
		return Int16(d[i])
	case []uint32:
		return Uint32(d[i])
	case []int32:
		return Int32(d[i])
	case []float32:
		return Float32(d[i])
	case []bool:
		return Bool(d[i])
	case []string:
		return String(d[i])
	case []*Array:
		return ArrayValue(d[i])
	case []uint64:
		return Uint64(d[i])
	case []int64:
		return Int64(d[i])
	case []float64:
		return Float64(d[i])
	}
	panic(fmt.Sprintf("gguf: array with element type %s has no data", a.Elem))
}

// Equal reports whether both arrays have the same element type and
// elements (floats compared by bits).
func (a *Array) Equal(b *Array) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Elem != b.Elem || a.Len() != b.Len() {
		return false
	}
	switch d := a.data.(type) {
	case []float32:
		e := b.data.([]float32)
		return slices.EqualFunc(d, e, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	case []float64:
		e := b.data.([]float64)
		return slices.EqualFunc(d, e, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	case []*Array:
		return slices.EqualFunc(d, b.data.([]*Array), (*Array).Equal)
	}
	for i := range a.Len() {
		if !a.Index(i).Equal(b.Index(i)) {
			return false
		}
	}
	return true
}

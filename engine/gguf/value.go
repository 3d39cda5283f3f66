package gguf

import (
	"fmt"
	"math"
)

// ValueType is a GGUF metadata value type id.
type ValueType uint32

// The 13 GGUF metadata value types, with their ids as stored in files.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var typeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String is the type's lower-case name as in the GGUF specification.
func (t ValueType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Valid reports whether t is one of the 13 defined types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// fixedSize is the encoded size of a scalar of type t; 0 for string and
// array, whose size depends on their content.
func (t ValueType) fixedSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the smallest encoding of one value of type t; it bounds how
// many elements an array can claim given the bytes left in the file.
func (t ValueType) minSize() int {
	switch t {
	case TypeString:
		return 8 // length prefix
	case TypeArray:
		return 12 // element type + count
	}
	return t.fixedSize()
}

// Value is one metadata value. The zero Value has no type and matches no
// accessor.
type Value struct {
	typ   ValueType
	valid bool
	bits  uint64 // numeric scalars and bool, as their raw little-endian bits
	str   string
	arr   *Array
}

// Type is the value's GGUF type.
func (v Value) Type() ValueType { return v.typ }

func scalar(t ValueType, bits uint64) Value { return Value{typ: t, valid: true, bits: bits} }

// Constructors for each type.

func Uint8(x uint8) Value     { return scalar(TypeUint8, uint64(x)) }
func Int8(x int8) Value       { return scalar(TypeInt8, uint64(uint8(x))) }
func Uint16(x uint16) Value   { return scalar(TypeUint16, uint64(x)) }
func Int16(x int16) Value     { return scalar(TypeInt16, uint64(uint16(x))) }
func Uint32(x uint32) Value   { return scalar(TypeUint32, uint64(x)) }
func Int32(x int32) Value     { return scalar(TypeInt32, uint64(uint32(x))) }
func Float32(x float32) Value { return scalar(TypeFloat32, uint64(math.Float32bits(x))) }
func Uint64(x uint64) Value   { return scalar(TypeUint64, x) }
func Int64(x int64) Value     { return scalar(TypeInt64, uint64(x)) }
func Float64(x float64) Value { return scalar(TypeFloat64, math.Float64bits(x)) }
func String(s string) Value   { return Value{typ: TypeString, valid: true, str: s} }

func Bool(b bool) Value {
	if b {
		return scalar(TypeBool, 1)
	}
	return scalar(TypeBool, 0)
}

// ArrayValue wraps an array as a metadata value.
func ArrayValue(a *Array) Value { return Value{typ: TypeArray, valid: a != nil, arr: a} }

// Typed accessors: ok is false unless the value has exactly that type.

func (v Value) Uint8() (uint8, bool)   { return uint8(v.bits), v.is(TypeUint8) }
func (v Value) Int8() (int8, bool)     { return int8(uint8(v.bits)), v.is(TypeInt8) }
func (v Value) Uint16() (uint16, bool) { return uint16(v.bits), v.is(TypeUint16) }
func (v Value) Int16() (int16, bool)   { return int16(uint16(v.bits)), v.is(TypeInt16) }
func (v Value) Uint32() (uint32, bool) { return uint32(v.bits), v.is(TypeUint32) }
func (v Value) Int32() (int32, bool)   { return int32(uint32(v.bits)), v.is(TypeInt32) }
func (v Value) Float32() (float32, bool) {
	return math.Float32frombits(uint32(v.bits)), v.is(TypeFloat32)
}
func (v Value) Bool() (bool, bool)     { return v.bits != 0, v.is(TypeBool) }
func (v Value) String() (string, bool) { return v.str, v.is(TypeString) }
func (v Value) Uint64() (uint64, bool) { return v.bits, v.is(TypeUint64) }
func (v Value) Int64() (int64, bool)   { return int64(v.bits), v.is(TypeInt64) }
func (v Value) Float64() (float64, bool) {
	return math.Float64frombits(v.bits), v.is(TypeFloat64)
}
func (v Value) Array() (*Array, bool) { return v.arr, v.is(TypeArray) }

func (v Value) is(t ValueType) bool { return v.valid && v.typ == t }

// Int returns any integer-typed value as int64. Writers disagree on the
// integer width of keys such as context lengths, so readers of hyper-
// parameters should use this. ok is false for non-integers and for uint64
// values above MaxInt64.
func (v Value) Int() (int64, bool) {
	if !v.valid {
		return 0, false
	}
	switch v.typ {
	case TypeUint8, TypeUint16, TypeUint32:
		return int64(v.bits), true
	case TypeUint64:
		return int64(v.bits), v.bits <= math.MaxInt64
	case TypeInt8:
		return int64(int8(v.bits)), true
	case TypeInt16:
		return int64(int16(v.bits)), true
	case TypeInt32:
		return int64(int32(v.bits)), true
	case TypeInt64:
		return int64(v.bits), true
	}
	return 0, false
}

// Float returns a float32 or float64 value as float64.
func (v Value) Float() (float64, bool) {
	if f, ok := v.Float32(); ok {
		return float64(f), true
	}
	return v.Float64()
}

// Any returns the value as a plain Go value (uint8 ... float64, bool,
// string, or *Array); nil for the zero Value.
func (v Value) Any() any {
	if !v.valid {
		return nil
	}
	switch v.typ {
	case TypeUint8:
		return uint8(v.bits)
	case TypeInt8:
		return int8(v.bits)
	case TypeUint16:
		return uint16(v.bits)
	case TypeInt16:
		return int16(v.bits)
	case TypeUint32:
		return uint32(v.bits)
	case TypeInt32:
		return int32(v.bits)
	case TypeFloat32:
		return math.Float32frombits(uint32(v.bits))
	case TypeBool:
		return v.bits != 0
	case TypeString:
		return v.str
	case TypeArray:
		return v.arr
	case TypeUint64:
		return v.bits
	case TypeInt64:
		return int64(v.bits)
	case TypeFloat64:
		return math.Float64frombits(v.bits)
	}
	return nil
}

// Equal reports whether two values have the same type and content (float
// values compare by bits, so NaNs with equal payloads are equal).
func (v Value) Equal(w Value) bool {
	if v.valid != w.valid || v.typ != w.typ || v.bits != w.bits || v.str != w.str {
		return false
	}
	if v.typ == TypeArray {
		return v.arr.Equal(w.arr)
	}
	return true
}

// GoString formats the value for debugging.
func (v Value) GoString() string { return fmt.Sprintf("gguf.%s(%v)", v.typ, v.Any()) }

package gguf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// NewArray, NewArrayOf and Len share one table of element types: every
// Element type gets its ValueType both ways, a nil slice becomes an empty
// array, and other types get an array the writer rejects.
func TestArrayElementTable(t *testing.T) {
	for _, c := range []struct {
		typed *Array
		slice any
		want  ValueType
	}{
		{NewArray([]uint8{1, 2}), []uint8{1, 2}, TypeUint8},
		{NewArray([]int8{1, 2}), []int8{1, 2}, TypeInt8},
		{NewArray([]uint16{1, 2}), []uint16{1, 2}, TypeUint16},
		{NewArray([]int16{1, 2}), []int16{1, 2}, TypeInt16},
		{NewArray([]uint32{1, 2}), []uint32{1, 2}, TypeUint32},
		{NewArray([]int32{1, 2}), []int32{1, 2}, TypeInt32},
		{NewArray([]float32{1, 2}), []float32{1, 2}, TypeFloat32},
		{NewArray([]bool{true, false}), []bool{true, false}, TypeBool},
		{NewArray([]string{"a", "b"}), []string{"a", "b"}, TypeString},
		{NewArray([]*Array{NewArray([]int8{}), NewArray([]int8{3})}), []*Array{NewArray([]int8{}), NewArray([]int8{3})}, TypeArray},
		{NewArray([]uint64{1, 2}), []uint64{1, 2}, TypeUint64},
		{NewArray([]int64{1, 2}), []int64{1, 2}, TypeInt64},
		{NewArray([]float64{1, 2}), []float64{1, 2}, TypeFloat64},
	} {
		of := NewArrayOf(c.slice)
		require.Equal(t, c.want, c.typed.Elem)
		require.Equal(t, c.want, of.Elem)
		require.Equal(t, 2, c.typed.Len(), c.want.String())
		require.True(t, c.typed.Equal(of), c.want.String())
	}

	empty := NewArrayOf([]string(nil))
	require.Equal(t, TypeString, empty.Elem)
	require.Equal(t, 0, empty.Len())
	require.NoError(t, checkValue(ArrayValue(empty), 0))

	other := NewArrayOf([]int{1})
	require.Equal(t, ValueType(math.MaxUint32), other.Elem)
	require.Equal(t, 0, other.Len())
	require.Error(t, checkValue(ArrayValue(other), 0))
	require.Equal(t, 0, (*Array)(nil).Len())
}

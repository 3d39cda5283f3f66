package ggml

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTraitsMatchGGML(t *testing.T) {
	var doc struct {
		Types []struct {
			ID          uint32 `json:"id"`
			Name        string `json:"name"`
			BlockSize   int    `json:"block_size"`
			TypeSize    int    `json:"type_size"`
			IsQuantized bool   `json:"is_quantized"`
			VecDotType  string `json:"cpu_vec_dot_type"`
		} `json:"types"`
	}
	require.NoError(t, json.Unmarshal(kitFile(t, "ggml_types.json"), &doc))
	require.GreaterOrEqual(t, len(doc.Types), 30)
	checked := 0
	for _, e := range doc.Types {
		tr, ok := Type(e.ID).Traits()
		if !ok {
			continue
		}
		checked++
		require.Equal(t, e.Name, tr.Name, "id %d", e.ID)
		require.Equal(t, e.BlockSize, tr.BlockSize, e.Name)
		require.Equal(t, e.TypeSize, tr.TypeSize, e.Name)
		require.Equal(t, e.IsQuantized, tr.Quantized, e.Name)
		if e.VecDotType != "" {
			require.Equal(t, e.VecDotType, tr.VecDotType.String(), e.Name)
		}
		p, err := ParseType(e.Name)
		require.NoError(t, err)
		require.Equal(t, Type(e.ID), p)
	}
	require.Equal(t, len(traits), checked, "every Hark type id is in ggml's table")
}

// TestBlockConstants ties the exported layout constants to the traits table.
func TestBlockConstants(t *testing.T) {
	for _, c := range []struct {
		t          Type
		qk, nbytes int
	}{
		{Q4_0, QK4_0, BlockQ4_0Bytes}, {Q4_1, QK4_1, BlockQ4_1Bytes}, {Q5_0, QK5_0, BlockQ5_0Bytes},
		{Q5_1, QK5_1, BlockQ5_1Bytes}, {Q8_0, QK8_0, BlockQ8_0Bytes}, {Q8_1, QK8_1, BlockQ8_1Bytes},
		{IQ4_NL, QK4_NL, BlockIQ4NLBytes}, {Q2_K, QK_K, BlockQ2_KBytes}, {Q3_K, QK_K, BlockQ3_KBytes},
		{Q4_K, QK_K, BlockQ4_KBytes}, {Q5_K, QK_K, BlockQ5_KBytes}, {Q6_K, QK_K, BlockQ6_KBytes},
		{Q8_K, QK_K, BlockQ8_KBytes},
	} {
		require.Equal(t, c.t.BlockSize(), c.qk, c.t.String())
		require.Equal(t, c.t.TypeSize(), c.nbytes, c.t.String())
	}
}

// TestSupportedTablesAgree keeps Traits.Supported honest: every supported
// type can be dequantized, quantized and dotted (I32 is an index type with
// no arithmetic here).
func TestSupportedTablesAgree(t *testing.T) {
	for typ, tr := range traits {
		if !tr.Supported || typ == I32 {
			continue
		}
		require.Contains(t, codecs, typ, tr.Name)
		require.NotNil(t, codecs[typ].decode, tr.Name)
		require.NotNil(t, codecs[typ].encode, tr.Name)
		if typ != Q8_1 && typ != Q8_K {
			require.Contains(t, vecDots, typ, tr.Name)
		}
	}
	for typ := range codecs {
		require.True(t, typ.Supported(), typ.String())
	}
}

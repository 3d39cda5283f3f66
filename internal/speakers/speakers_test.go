package speakers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for list, want := range map[string][]int{
		"you,others":     {You, Others},
		" Others , YOU ": {Others, You},
	} {
		got, err := Parse(list)
		require.NoError(t, err, list)
		require.Equal(t, want, got, list)
	}
	for list, msg := range map[string]string{
		"":                       "name the 2 channels",
		"you":                    "name the 2 channels",
		"you,others,you":         "name the 2 channels",
		"you,boss":               `unknown speaker "boss"`,
		"you,you":                "names you twice",
		strings.Repeat("y", 100): "over 64 characters",
	} {
		_, err := Parse(list)
		require.ErrorContains(t, err, msg, "%q", list)
	}
}

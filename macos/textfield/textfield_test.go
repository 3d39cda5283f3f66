package textfield

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSuffixRange(t *testing.T) {
	cases := []struct {
		value, old string
		loc, n     int
		ok         bool
	}{
		{"Dear Bob, hello there", "hello there", 10, 11, true},
		{"hello there", "hello there", 0, 11, true},
		{"hello there, and more", "hello there", 0, 0, false}, // typed on
		{"abc", "", 0, 0, false},
		{"😀 ask not", "ask not", 3, 7, true}, // the emoji is two UTF-16 units
		{"café au lait", "au lait", 5, 7, true},
	}
	for _, c := range cases {
		loc, n, ok := suffixRange(c.value, c.old)
		require.Equal(t, c.ok, ok, "%q %q", c.value, c.old)
		require.Equal(t, c.loc, loc, "%q %q", c.value, c.old)
		require.Equal(t, c.n, n, "%q %q", c.value, c.old)
	}
}

package modes

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The mode hotkey walks the modes in order and comes back to automatic.
func TestNext(t *testing.T) {
	ms := []Mode{{Name: "Chat"}, {Name: "Code"}, {Name: "Email"}}
	cases := []struct{ active, want string }{
		{"", "Chat"},
		{"Chat", "Code"},
		{"code", "Email"}, // names match case-insensitively
		{"Email", ""},     // past the last: automatic again
		{"Deleted", "Chat"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Next(ms, c.active), "from %q", c.active)
	}
	require.Equal(t, "", Next(nil, ""), "no modes: automatic stays")
	require.Equal(t, "", Next(nil, "Gone"))

	// A full cycle visits every mode once.
	seen, cur := []string{}, ""
	for range len(ms) + 1 {
		cur = Next(ms, cur)
		seen = append(seen, cur)
	}
	require.Equal(t, []string{"Chat", "Code", "Email", ""}, seen)
}

func TestFind(t *testing.T) {
	ms := []Mode{{Name: "Chat"}}
	m, ok := Find(ms, "CHAT")
	require.True(t, ok)
	require.Equal(t, "Chat", m.Name)
	_, ok = Find(ms, "")
	require.False(t, ok)
}

package modes

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChoose(t *testing.T) {
	ms := []Mode{
		{Name: "Chat", Apps: []string{"slack", "com.tinyspeck.slackmacgap"}, AutoEnter: true},
		{Name: "Code", Apps: []string{"code", "com.microsoft.VSCode"}},
		{Name: "Plain"},
	}
	cases := []struct{ manual, app, def, want string }{
		{"", "Slack", "", "Chat"},
		{"", "com.microsoft.vscode", "Plain", "Code"},
		{"", "firefox", "Plain", "Plain"},
		{"", "firefox", "", ""},
		{"plain", "slack", "", "Plain"}, // by hand beats the focused app
		{"gone", "code", "", "Code"},    // a deleted manual mode falls through
		{"", "", "Missing", ""},
	}
	for _, c := range cases {
		m, ok := Choose(ms, c.manual, c.app, c.def)
		require.Equal(t, c.want != "", ok, "%+v", c)
		require.Equal(t, c.want, m.Name, "%+v", c)
	}
}

func TestValidate(t *testing.T) {
	langs, outs := []string{"en", "de"}, []string{"paste", "copy", "type"}
	good := []Mode{{Name: "Email", Apps: []string{"thunderbird"}, Language: "de", Translate: true, Cleanup: CleanupEmail, Output: "type", Vocabulary: "Hark\n"},
		{Name: "Mine", Cleanup: CleanupCustom, CleanupPrompt: "Shout it."}, {Name: "Auto", Language: "auto"}}
	require.NoError(t, Validate(good, langs, outs))
	for _, bad := range [][]Mode{
		{{Name: ""}},
		{{Name: "A"}, {Name: "a"}},
		{{Name: "A", Language: "xx"}},
		{{Name: "A", Output: "shout"}},
		{{Name: "A", Cleanup: "poem"}},
		{{Name: "A", Cleanup: CleanupCustom}},
		{{Name: "A", Apps: []string{" "}}},
		{{Name: "A", Vocabulary: "= x"}},
		make([]Mode, MaxModes+1),
	} {
		require.Error(t, Validate(bad, langs, outs), "%+v", bad)
	}
	require.Equal(t, Builtin[CleanupEmail], good[0].CleanupInstruction())
	require.Equal(t, "Shout it.", good[1].CleanupInstruction())
	require.Equal(t, "", good[2].CleanupInstruction())
}

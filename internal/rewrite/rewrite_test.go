package rewrite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/vocab"
)

func TestRewrite(t *testing.T) {
	kube := []vocab.Term{{Text: "Kubernetes", SoundsLike: []string{"cooper netties"}}, {Text: "PyTorch", SoundsLike: []string{"pie torch"}}}
	cases := []struct {
		name string
		opt  Options
		in   string
		want string
	}{
		{"sounds like", Options{Vocabulary: kube}, "Deploy it on Cooper Netties with pie torch.", "Deploy it on Kubernetes with PyTorch."},
		{"sounds like is whole-word", Options{Vocabulary: kube}, "pie torches", "pie torches"},
		{"literal", Options{Rules: []Rule{{From: "cat", To: "dog"}}}, "concatenate cat Cat", "condogenate dog Cat"},
		{"whole word", Options{Rules: []Rule{{From: "cat", To: "dog", WholeWord: true}}}, "concatenate cat Cat", "concatenate dog Cat"},
		{"ignore case", Options{Rules: []Rule{{From: "cat", To: "dog", WholeWord: true, IgnoreCase: true}}}, "cat Cat CAT", "dog dog dog"},
		{"symbols whole word", Options{Rules: []Rule{{From: "c plus plus", To: "C++", WholeWord: true, IgnoreCase: true}, {From: "C++", To: "C++ (the language)", WholeWord: true}}}, "I write C plus plus.", "I write C++ (the language)."},
		{"in order", Options{Rules: []Rule{{From: "a", To: "b"}, {From: "b", To: "c"}}}, "a", "c"},
		{"regexp characters are literal", Options{Rules: []Rule{{From: "a.b", To: "x"}}}, "a.b axb", "x axb"},
		{"replacement is literal", Options{Rules: []Rule{{From: "x", To: "$1"}}}, "x", "$1"},
		{"new line", Options{Commands: true}, "Dear Anna, new line. thanks for the notes.", "Dear Anna\nThanks for the notes."},
		{"new paragraph", Options{Commands: true}, "First point. New paragraph. Second point.", "First point.\n\nSecond point."},
		{"scratch that", Options{Commands: true}, "Hello there. This is wrong. Scratch that. This is right.", "Hello there. This is right."},
		{"scratch that at the end", Options{Commands: true}, "Keep this. Drop this. Scratch that.", "Keep this."},
		{"scratch the only sentence", Options{Commands: true}, "Drop this, scratch that.", ""},
		{"a command phrase inside a sentence", Options{Commands: true}, "We launched a new line of shoes.", "We launched a new line of shoes."},
		{"a sentence starting with a command phrase", Options{Commands: true}, "The new paragraph starts here.", "The new paragraph starts here."},
		{"commands off", Options{}, "Hello. New line. World", "Hello. New line. World"},
		{"rules before commands", Options{Rules: []Rule{{From: "next line", To: "new line", WholeWord: true, IgnoreCase: true}}, Commands: true}, "A. Next line. B.", "A.\nB."},
	}
	for _, c := range cases {
		w, err := New(c.opt)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, w.Apply(c.in), c.name)
	}
}

func TestValidate(t *testing.T) {
	require.NoError(t, Validate([]Rule{{From: "a"}}))
	require.Error(t, Validate([]Rule{{From: " "}}))
	require.Error(t, Validate([]Rule{{From: strings.Repeat("a", MaxRuleLen+1)}}))
	require.Error(t, Validate(make([]Rule, MaxRules+1)))
}

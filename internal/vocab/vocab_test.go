package vocab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFormat(t *testing.T) {
	terms, err := Parse("# mine\n Kubernetes =  cooper netties, cube ernetes \n\nPyTorch\nkubernetes = kuber nettes\nHark = hark\n")
	require.NoError(t, err)
	require.Equal(t, []Term{
		{Text: "Kubernetes", SoundsLike: []string{"cooper netties", "cube ernetes", "kuber nettes"}},
		{Text: "PyTorch"},
		{Text: "Hark"}, // a "sounds like" equal to the term is dropped
	}, terms)
	back, err := Parse(Format(terms))
	require.NoError(t, err)
	require.Equal(t, terms, back)

	for _, bad := range []string{"= alone", strings.Repeat("x", MaxTermLen+1), "a\x01b", strings.Repeat("a\n", MaxText)} {
		_, err := Parse(bad)
		require.Error(t, err, "%.20q", bad)
	}
	var many strings.Builder
	for i := range MaxTerms + 1 {
		fmt.Fprintf(&many, "term%d\n", i)
	}
	_, err = Parse(many.String())
	require.ErrorContains(t, err, "more than")
}

func TestMerge(t *testing.T) {
	got := Merge([]Term{{Text: "B"}, {Text: "A"}}, []Term{{Text: "a"}, {Text: "C"}})
	require.Equal(t, []Term{{Text: "B"}, {Text: "A"}, {Text: "C"}}, got)
}

// wordEncoder counts a token per word and per punctuation mark, enough to
// check the budget logic (the real tokenizer is tested with the app).
type wordEncoder struct{}

func (wordEncoder) Encode(s string) []int32 {
	s = strings.NewReplacer(",", " ,", ".", " .").Replace(s)
	out := make([]int32, len(strings.Fields(s)))
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func TestBuildPromptBudget(t *testing.T) {
	terms := []Term{{Text: "Kubernetes"}, {Text: "Py Torch"}, {Text: "Hark"}, {Text: "x"}}
	p := BuildPrompt(wordEncoder{}, terms, 6)
	// " Kubernetes, Py Torch." = Kubernetes , Py Torch . = 5 tokens; + ", Hark" = 7.
	require.Equal(t, " Kubernetes, Py Torch.", p.Text)
	require.Equal(t, []string{"Kubernetes", "Py Torch"}, p.Used)
	require.Equal(t, []string{"Hark", "x"}, p.Dropped)
	require.Len(t, p.Tokens, 5)

	require.Empty(t, BuildPrompt(wordEncoder{}, terms, 0).Tokens) // off
	all := BuildPrompt(wordEncoder{}, terms, PromptTokens)
	require.Empty(t, all.Dropped)
	require.Equal(t, " Kubernetes, Py Torch, Hark, x.", all.Text)

	none := BuildPrompt(wordEncoder{}, terms, 1)
	require.Empty(t, none.Tokens)
	require.Len(t, none.Dropped, 4)
	require.Empty(t, BuildPrompt(wordEncoder{}, nil, PromptTokens).Tokens)
}

func TestBias(t *testing.T) {
	b := Bias(wordEncoder{}, []Term{{Text: "a b"}, {Text: "c"}}, 2)
	require.Equal(t, map[int32]float32{0: 2}, b) // each term's first token
	require.Nil(t, Bias(wordEncoder{}, nil, 2))
}

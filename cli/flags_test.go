package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// The commands that run the same kind of model share one definition of
// their common flags: same names, help and defaults.
func TestSharedFlagSets(t *testing.T) {
	same := func(a, b *cobra.Command, names ...string) {
		t.Helper()
		for _, n := range names {
			fa, fb := a.Flags().Lookup(n), b.Flags().Lookup(n)
			require.NotNil(t, fa, "%s --%s", a.Name(), n)
			require.NotNil(t, fb, "%s --%s", b.Name(), n)
			require.Equal(t, []string{fa.Usage, fa.DefValue, fa.Shorthand}, []string{fb.Usage, fb.DefValue, fb.Shorthand}, "--%s", n)
		}
	}
	same(newTranscribeCmd(nil), newStreamCmd(nil), "model", "language", "prompt", "threads", backendFlag, gpuFlag)
	chat, gen := newChatCmd(nil), newGenerateCmd(nil)
	var samplers []string
	gen.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "n" && f.Name != "slide" {
			samplers = append(samplers, f.Name)
		}
	})
	require.Subset(t, samplers, []string{"model", "ctx", "seed", "ignore-eos", "temp", "top-k", backendFlag, gpuFlag})
	same(chat, gen, samplers...)
	require.Equal(t, "128", gen.Flags().Lookup("n").DefValue)
	require.Equal(t, "512", chat.Flags().Lookup("n").DefValue, "an answer's bound is chat's own")
}

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// testEnv is an Env over buffers, for tests that call a command's run
// directly: stdin reads in, stdout and stderr collect in out and errOut.
func testEnv(t *testing.T, modelsDir, in string) (e Env, out, errOut *bytes.Buffer) {
	t.Helper()
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return Env{IOStreams: IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut},
		Ctx: context.Background(), ModelsDir: modelsDir}, out, errOut
}

// Only a command run by Execute (its process exits after it) is told so;
// tests run commands in-process through run.
func TestEnvProcessExits(t *testing.T) {
	var got []bool
	capture := func() *cobra.Command {
		root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
		root.AddCommand(&cobra.Command{Use: "probe", RunE: func(cmd *cobra.Command, _ []string) error {
			got = append(got, envOf(cmd).ProcessExits)
			return nil
		}})
		root.SetArgs([]string{"probe"})
		return root
	}
	require.NoError(t, capture().ExecuteContext(context.WithValue(context.Background(), processExitsKey{}, true)))
	require.NoError(t, capture().Execute())
	require.Equal(t, []bool{true, false}, got)
	require.Zero(t, run([]string{"--version"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}))
}

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// testEnv is an Env over buffers, for tests that call a command's run
// directly: stdin reads in, stdout and stderr collect in out and errOut.
func testEnv(t *testing.T, modelsDir, in string) (e Env, out, errOut *bytes.Buffer) {
	t.Helper()
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return Env{IOStreams: IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut},
		Ctx: context.Background(), ModelsDir: modelsDir}, out, errOut
}

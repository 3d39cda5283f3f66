package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/version"
)

func TestVersionFlag(t *testing.T) {
	defer func(v, c, d string) { version.Version, version.Commit, version.Date = v, c, d }(version.Version, version.Commit, version.Date)
	version.Version, version.Commit, version.Date = "9.8.7", "feedfacecafe", "2026-11-24T10:00:00Z"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		root := NewRoot(&out, &errb)
		root.SetArgs(args)
		require.NoError(t, root.Execute(), "%v: %s", args, errb.String())
		require.Regexp(t, `^hark 9\.8\.7 \(commit feedfacecafe, built 2026-11-24T10:00:00Z, go[0-9.]+ [a-z0-9]+/[a-z0-9]+, backends: cpu(, metal)?\)\n$`, out.String(), "%v", args)
	}
}

// The run called directly prints the version line it is given.
func TestRunVersion(t *testing.T) {
	e, out, _ := testEnv(t, "", "")
	info := version.Info{Version: "1.2.3", Commit: "abc", Date: "2026-11-29T00:00:00Z", Go: "go1.26.8", Platform: "linux/amd64", Backends: []string{"cpu"}}
	require.NoError(t, runVersion(&VersionOptions{IOStreams: e.IOStreams, Info: info}))
	require.Equal(t, info.String()+"\n", out.String())
	require.Contains(t, out.String(), "1.2.3")
}

package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/backends/backendstest"
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
		require.Regexp(t, `^hark 9\.8\.7 \(commit feedfacecafe, built 2026-11-24T10:00:00Z, go[0-9.]+ [a-z0-9]+/[a-z0-9]+, backends: (cuda, )?cpu\)\n$`, out.String(), "%v", args)
	}
}

// The backends named are the driver list's that are here: on a machine
// with a CUDA GPU (a stand-in driver here) cuda comes before the CPU.
func TestVersionNamesTheGPU(t *testing.T) {
	backendstest.FakeGPU(t, backends.CUDA)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		root := NewRoot(&out, &errb)
		root.SetArgs(args)
		require.NoError(t, root.Execute(), "%v: %s", args, errb.String())
		require.Contains(t, out.String(), ", backends: cuda, cpu)\n", "%v", args)
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

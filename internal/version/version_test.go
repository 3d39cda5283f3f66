package version

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStampedInfo(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "1.2.3", "0123456789ab", "2026-11-24T10:00:00Z"
	in := Get([]string{"cpu", "metal"})
	require.Equal(t, "1.2.3", in.Version)
	require.Equal(t, "0123456789ab", in.Commit, "a stamped commit is kept as stamped")
	s := in.String()
	for _, want := range []string{"hark 1.2.3", "commit 0123456789ab", "built 2026-11-24T10:00:00Z", "backends: cpu, metal"} {
		require.Contains(t, s, want)
	}
}

func TestUnstampedIsDev(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = ""
	in := Get(nil)
	require.Equal(t, "dev", in.Version)
	require.True(t, strings.HasPrefix(in.String(), "hark dev ("))
}

func TestParseCompare(t *testing.T) {
	order := []string{"0.9.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "v1.0.0", "1.0.1", "1.2.0", "10.0.0"}
	for i := range order {
		for j := range order {
			a, err := Parse(order[i])
			require.NoError(t, err)
			b, err := Parse(order[j])
			require.NoError(t, err)
			require.Equal(t, sign(i-j), a.Compare(b), "%s vs %s", order[i], order[j])
		}
	}
	v, err := Parse("v2.3.4-rc.1+build.5")
	require.NoError(t, err)
	require.Equal(t, "2.3.4-rc.1", v.String())
	for _, bad := range []string{"dev", "", "1.2", "1.2.3.4", "1.x.3", "-1.0.0", "1.0.9999999999"} {
		_, err := Parse(bad)
		require.Error(t, err, bad)
	}
}

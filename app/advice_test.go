package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/models"
)

// On a fresh install (no speech model to measure with) the Models view's
// advice comes from the machine's description: a 2-core AVX2 machine
// without a GPU gets small models and never large-v3 (which memory alone
// would allow); a 16-core one with a GPU gets large-v3. Every speech
// model gets an estimated window time and the speed group it belongs to,
// which agrees with that time.
func TestAdviceOnAFreshInstall(t *testing.T) {
	a := openApp(t, t.TempDir(), t.TempDir(), nil)
	for _, c := range []struct {
		m                models.Machine
		dictation, files string
	}{
		{models.Machine{Cores: 2, SIMD: "avx2"}, "whisper-base-q5_1", "whisper-small-q5_1"},
		{models.Machine{Cores: 16, SIMD: "avx512", GPU: "cuda"}, "whisper-large-v3-q5_0", "whisper-large-v3-q5_0"},
	} {
		a.Models.deps.machine = func(string) models.Machine { return c.m }
		adv, err := a.Models.Advice()
		require.NoError(t, err)
		require.Equal(t, c.dictation, adv.Dictation, c.m.String())
		require.Equal(t, c.files, adv.Files, c.m.String())
		require.Equal(t, c.m.String(), adv.Probe.Estimated)
		rec, err := a.Models.Recommended()
		require.NoError(t, err)
		require.Equal(t, c.dictation, rec["speech"])

		list, err := a.Models.List()
		require.NoError(t, err)
		for _, m := range list {
			if m.Task != string(models.Transcribe) {
				continue
			}
			require.True(t, m.Estimated, m.Name)
			require.Positive(t, m.WindowMs, m.Name)
			require.Equal(t, models.SpeedClass(m.WindowMs), m.Speed, m.Name)
			for _, task := range m.RecommendedFor {
				require.Contains(t, []string{c.dictation, c.files}, m.Name)
				if task == "dictation" {
					require.Equal(t, "dictation", m.Speed, "the dictation pick is under the dictation target")
				}
			}
			require.Equal(t, m.Name == c.dictation || m.Name == c.files, m.Recommended, m.Name)
		}
	}
}

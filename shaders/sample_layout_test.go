package shaders

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestSampleSettingsLayout: sample.metal reads plan.SampleSettings at the
// word offsets plan encodes it with, and bounds it as plan does; its
// launch scratch has the layout launchSample sizes.
func TestSampleSettingsLayout(t *testing.T) {
	src, err := File("sample.metal")
	require.NoError(t, err)
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(SMP_(?:SET_\w+|MAX_BIAS|MAX_TOP|LP_WORDS|DRAW_WORDS|HDR_WORDS|PART_WORDS|RANGE_GAP)) = (\d+),`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		got[m[1]] = v
	}
	require.Equal(t, map[string]int{
		"SMP_SET_TOPK": plan.SampleSetTopK, "SMP_SET_TOPP": plan.SampleSetTopP, "SMP_SET_MINP": plan.SampleSetMinP,
		"SMP_SET_TEMP": plan.SampleSetTemp, "SMP_SET_REPEAT": plan.SampleSetRepeat,
		"SMP_SET_PRESENCE": plan.SampleSetPresence, "SMP_SET_FREQUENCY": plan.SampleSetFrequency,
		"SMP_SET_SEED_LO": plan.SampleSetSeedLo, "SMP_SET_SEED_HI": plan.SampleSetSeedHi,
		"SMP_SET_LOGPROBS": plan.SampleSetLogprobs, "SMP_SET_NBIAS": plan.SampleSetNBias, "SMP_SET_BIAS": plan.SampleSetBias,
		"SMP_MAX_BIAS": plan.SampleMaxBias, "SMP_MAX_TOP": plan.SampleMaxTop, "SMP_LP_WORDS": plan.SampleLogprobWords,
		"SMP_DRAW_WORDS": plan.SampleDrawWords,
		"SMP_HDR_WORDS":  sampleHdrWords, "SMP_PART_WORDS": samplePartWords,
		"SMP_RANGE_GAP": sampleRangeGap,
	}, got)
}

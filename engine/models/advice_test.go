package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every catalog Whisper model has a family; figures carry their source.
func TestFamilies(t *testing.T) {
	for _, e := range Catalog() {
		if e.Task != Transcribe {
			continue
		}
		f, ok := FamilyOf(e.Name)
		require.True(t, ok, e.Name)
		require.Positive(t, f.Params, e.Name)
	}
	for _, f := range Families() {
		require.Equal(t, f.WER > 0, f.Source != "", "%s: a figure needs its source", f.Family)
	}
	f, _ := FamilyOf("whisper-small.en-q5_1")
	require.Equal(t, "small.en", f.Family)
}

// On a CPU-only 24 GB machine (tiny's window in 400 ms) dictation gets
// base (no published figure, but larger than tiny and within the target),
// files the small one, never large-v3; on a fast GPU large-v3 serves
// dictation too.
func TestAdviseSpeech(t *testing.T) {
	cpu := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "cpu", WindowMs: 400}
	d := AdviseSpeech(cpu, 24<<30, DictationWindowMs, "dictation")
	require.Equal(t, "whisper-base-q5_1", d.Name, "models without a figure are ranked by size, multilingual and lighter first")
	require.Contains(t, d.Reason, "no published accuracy figure")
	f := AdviseSpeech(cpu, 24<<30, FilesWindowMs, "files")
	require.Equal(t, "whisper-small-q5_1", f.Name)
	require.Contains(t, f.Reason, "3.4% WER")

	gpu := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "metal", WindowMs: 20}
	require.Equal(t, "whisper-large-v3-q5_0", AdviseSpeech(gpu, 24<<30, DictationWindowMs, "dictation").Name)

	slow := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "cpu", WindowMs: 5000}
	a := AdviseSpeech(slow, 24<<30, DictationWindowMs, "dictation")
	require.Equal(t, "whisper-tiny-q5_1", a.Name)
	require.Contains(t, a.Reason, "the fastest")

	// Slower than real time: nothing is recommended.
	crawl := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "cpu", WindowMs: 31_000}
	n := AdviseSpeech(crawl, 24<<30, FilesWindowMs, "files")
	require.Empty(t, n.Name)
	require.Contains(t, n.Reason, "faster than real time")
	require.Empty(t, AdviseSpeech(Probe{}, 24<<30, DictationWindowMs, "dictation").Name, "no probe, no advice")
}

// Before any model is installed the advice estimates from the machine: a
// 2-core AVX2 machine without a GPU (the CI machine) gets small models, a
// 16-core one with a GPU large ones; none gets a model the estimate says
// is slower than real time.
func TestAdviseFromMachine(t *testing.T) {
	small := Machine{Cores: 2, SIMD: "avx2"}
	p := small.Estimate()
	require.Equal(t, "2 cores, AVX2, no GPU", p.Estimated)
	d := AdviseSpeech(p, 24<<30, DictationWindowMs, "dictation")
	require.Equal(t, "whisper-base-q5_1", d.Name)
	require.Contains(t, d.Reason, "estimated for cpu (2 cores, AVX2, no GPU)")
	f := AdviseSpeech(p, 24<<30, FilesWindowMs, "files")
	require.Equal(t, "whisper-small-q5_1", f.Name)
	for _, a := range []Advice{d, f} {
		require.NotContains(t, a.Name, "large")
		require.NotContains(t, a.Name, "medium")
	}
	// The kit's measured 433 ms (tiny's shape) is what the rate says.
	require.InDelta(t, 433, p.Estimate(39_000_000), 20)

	big := Machine{Cores: 16, SIMD: "avx512", GPU: "cuda"}
	g := AdviseSpeech(big.Estimate(), 64<<30, DictationWindowMs, "dictation")
	require.Equal(t, "whisper-large-v3-q5_0", g.Name)
	require.Equal(t, "whisper-large-v3-q5_0", AdviseSpeech(big.Estimate(), 64<<30, FilesWindowMs, "files").Name)

	// One core, no SIMD: only what runs in real time.
	crawl := Machine{Cores: 1}
	for _, limit := range []float64{DictationWindowMs, FilesWindowMs} {
		a := AdviseSpeech(crawl.Estimate(), 4<<30, limit, "x")
		if a.Name != "" {
			fam, _ := FamilyOf(a.Name)
			require.LessOrEqual(t, crawl.Estimate().Estimate(fam.Params), float64(RealTimeWindowMs), a.Name)
		}
	}
	require.Equal(t, "dictation", SpeedClass(999))
	require.Equal(t, "files", SpeedClass(DictationWindowMs+1))
	require.Equal(t, "slow", SpeedClass(FilesWindowMs+1))
	require.Equal(t, "", SpeedClass(0))
}

package models

import (
	"strings"
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

// On a CPU-only 24 GB machine (tiny's window in 400 ms) dictation gets a
// tiny model, files the small one, never large-v3; on a fast GPU small
// serves dictation too.
func TestAdviseSpeech(t *testing.T) {
	cpu := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "cpu", WindowMs: 400}
	d := AdviseSpeech(cpu, 24<<30, DictationWindowMs, "dictation")
	require.True(t, strings.HasPrefix(d.Name, "whisper-tiny"), d.Name)
	require.Contains(t, d.Reason, "7.5% WER")
	f := AdviseSpeech(cpu, 24<<30, FilesWindowMs, "files")
	require.True(t, strings.HasPrefix(f.Name, "whisper-small"), f.Name)
	require.NotContains(t, f.Name, "large")

	gpu := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "metal", WindowMs: 20}
	require.True(t, strings.HasPrefix(AdviseSpeech(gpu, 24<<30, DictationWindowMs, "dictation").Name, "whisper-small"))

	slow := Probe{Model: "whisper-tiny", Params: 39_000_000, Backend: "cpu", WindowMs: 5000}
	a := AdviseSpeech(slow, 24<<30, DictationWindowMs, "dictation")
	require.True(t, strings.HasPrefix(a.Name, "whisper-tiny"), a.Name)
	require.Contains(t, a.Reason, "the fastest")
	require.Empty(t, AdviseSpeech(Probe{}, 24<<30, DictationWindowMs, "dictation").Name, "no probe, no advice")
}

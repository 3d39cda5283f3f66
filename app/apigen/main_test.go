package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedFilesUpToDate fails when frontend/src/lib/api.gen.ts is not
// what the Go services generate: run `go generate ./app/apigen`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := generate(root)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "frontend", "src", "lib", "api.gen.ts"))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "frontend/src/lib/api.gen.ts is stale: run go generate ./app/apigen")
}

// Every bound method is in the client with its parameters, every event
// with its payload, and a struct's optional (omitempty) fields are
// optional.
func TestGenerateCoversServicesAndEvents(t *testing.T) {
	b, err := generate(filepath.Join("..", ".."))
	require.NoError(t, err)
	s := string(b)
	for _, want := range []string{
		"export const Settings = {",
		"  Update: (d: SettingsData): Promise<SettingsData> => call<SettingsData>('Settings', 'Update', d),",
		"  List: (query: string, limit: number, offset: number): Promise<Item[]> => call<Item[]>('History', 'List', query, limit, offset),",
		"  Delete: (id: number): Promise<void> => call<void>('History', 'Delete', id),",
		"export const Shell = {",
		"  DictationState: 'dictation:state',",
		"  'transcription:progress': Progress",
		"  segment?: Segment | null",
		"export interface Segment {",
	} {
		require.Contains(t, s, want)
	}
	require.Equal(t, 1, strings.Count(s, "export interface Segment {"), "one timed-text type")
}

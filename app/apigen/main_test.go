package main

import (
	"os"
	"path/filepath"
	"regexp"
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

// The page's file pickers take their lists from api.gen.ts, which has the
// lists the window's dialogs use: no picker writes its own.
func TestPickersUseTheGeneratedLists(t *testing.T) {
	b, err := generate(filepath.Join("..", ".."))
	require.NoError(t, err)
	s := string(b)
	require.Contains(t, s, "export const AudioExtensions = ['.wav', '.mp3', ")
	require.Contains(t, s, "'.mov', '.webm'")
	require.Contains(t, s, "export const ModelExtensions = ['.bin', '.gguf'] as const")

	src := filepath.Join("..", "..", "frontend", "src")
	accept := regexp.MustCompile(`accept=("[^"]*"|\{[^}]*\})`)
	uses := map[string]int{}
	require.NoError(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".svelte") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range accept.FindAllStringSubmatch(string(b), -1) {
			for _, list := range []string{"AudioExtensions", "ModelExtensions"} {
				if strings.Contains(m[1], list) {
					uses[list]++
				}
			}
			for _, e := range []string{".wav", ".mp3", ".m4a", ".bin", ".gguf"} {
				require.NotContains(t, m[1], e, "%s lists file types by hand: use api.gen.ts's lists", path)
			}
		}
		return nil
	}))
	require.Equal(t, map[string]int{"AudioExtensions": 1, "ModelExtensions": 1}, uses, "the Files and Models pickers")
}

// Package usererr turns an error chain into one short line a person can
// act on: each file named once, its reason in plain words ("no such
// file", not "open x: no such file or directory"), no Go package prefixes
// or type names, and (where the reader is a page, not the user's shell)
// no absolute paths of the app's own folders. The CLI prints its errors
// through it and the app's HTTP bridge answers with it.
package usererr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Folder is a folder whose absolute path the reader is not shown: the
// folder itself reads as Name, a path under it as its path relative to it.
type Folder struct {
	Path string
	Name string // e.g. "the data folder"
}

// Options say what Message hides.
type Options struct {
	Folders []Folder
}

// packages are the Go package prefixes Hark's (and the standard
// library's) errors start with ("audio: ..."): the reader has no use for
// them.
var packages = map[string]bool{
	"app": true, "audio": true, "blas": true, "bridge": true, "capture": true, "catalog": true,
	"control": true, "cpu": true, "cuda": true, "dictation": true, "engine": true, "ffmpeg": true,
	"gguf": true, "ggml": true, "json": true, "llm": true, "metal": true, "models": true,
	"platform": true, "rewrite": true, "runtime": true, "serve": true, "store": true,
	"tokenizer": true, "vad": true, "whisper": true, "wav": true,
}

// Message is err as one line for a person.
func Message(err error, o Options) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	// Plain words for the errors of the standard library that carry Go
	// names or repeat their operand.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		s = strings.Replace(s, pe.Error(), pe.Path+": "+reason(pe.Err), 1)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		s = strings.Replace(s, te.Error(), typeMismatch(te), 1)
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		s = strings.Replace(s, ne.Error(), fmt.Sprintf("%q is not a valid number", ne.Num), 1)
	}
	s = goTypes.ReplaceAllString(s, "")
	s = hideFolders(s, o.Folders)
	return dedupe(s)
}

// reason says a file-system error in plain words.
func reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.EISDIR):
		return "is a folder, not a file"
	case errors.Is(err, syscall.ENOTDIR):
		return "a part of the path is not a folder"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	}
	return err.Error()
}

// typeMismatch says a JSON value of the wrong kind without Go's names.
func typeMismatch(e *json.UnmarshalTypeError) string {
	want := "a value of another kind"
	if e.Type != nil {
		switch e.Type.Kind() {
		case reflect.Bool:
			want = "true or false"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.String:
			want = "text"
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Struct, reflect.Map:
			want = "an object"
		}
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: want %s, not %s", e.Field, want, e.Value)
	}
	return fmt.Sprintf("want %s, not %s", want, e.Value)
}

// goTypes are what is left of Go's names in other errors (" of type
// *app.Item", " into Go value of type int").
var goTypes = regexp.MustCompile(`( into)? Go (struct field|value)[^:]*| of type \*?(\[\])?(\w+\.\w+|u?int\d*|float\d+|string|bool)\b`)

// hideFolders rewrites absolute paths under the folders (longest first).
func hideFolders(s string, folders []Folder) string {
	fs := make([]Folder, 0, len(folders))
	for _, f := range folders {
		if f.Path != "" && filepath.IsAbs(f.Path) {
			fs = append(fs, Folder{Path: filepath.Clean(f.Path), Name: f.Name})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return len(fs[i].Path) > len(fs[j].Path) })
	for _, f := range fs {
		s = strings.ReplaceAll(s, f.Path+string(filepath.Separator), "")
		s = strings.ReplaceAll(s, f.Path, f.Name)
	}
	return s
}

// dedupe drops the parts of a "a: b: c" chain a reader has already read
// (the file named again by each layer) and the Go package prefixes.
func dedupe(s string) string {
	parts := strings.Split(s, ": ")
	out := make([]string, 0, len(parts))
	seen := map[string]bool{}
	for i, p := range parts {
		if i < len(parts)-1 && packages[p] {
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"howett.net/plist"
)

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

func checkCmd(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	app := fs.String("app", "", "the .app bundle")
	version := fs.String("version", "", "expected CFBundleShortVersionString")
	ents := fs.String("entitlements", "", "entitlements plist every Mach-O slice must carry (empty: not signed yet)")
	fs.Parse(args)
	if *app == "" || *version == "" {
		return errorf("check: -app and -version are required")
	}
	info, err := readPlist(filepath.Join(*app, "Contents", "Info.plist"))
	if err != nil {
		return err
	}
	str := func(k string) string { s, _ := info[k].(string); return s }
	want := map[string]string{
		"CFBundleIdentifier":         "com.harkapp.hark",
		"CFBundlePackageType":        "APPL",
		"CFBundleShortVersionString": *version,
		"CFBundleVersion":            *version,
		"CFBundleIconFile":           "iconfile",
		"LSMinimumSystemVersion":     "12.0",
	}
	for k, v := range want {
		if str(k) != v {
			return errorf("Info.plist: %s is %q, want %q", k, str(k), v)
		}
	}
	if ui, _ := info["LSUIElement"].(bool); !ui {
		return errorf("Info.plist: LSUIElement is not true (a menu-bar app)")
	}
	if len(str("NSMicrophoneUsageDescription")) < 20 {
		return errorf("Info.plist: no NSMicrophoneUsageDescription")
	}
	if !hasURLScheme(info, "hark") {
		return errorf("Info.plist: no CFBundleURLTypes entry for hark:// (dictation URLs, wails.json info.protocols)")
	}
	exe := filepath.Join(*app, "Contents", "MacOS", str("CFBundleExecutable"))
	st, err := os.Stat(exe)
	if err != nil || str("CFBundleExecutable") == "" {
		return errorf("bundle: CFBundleExecutable %q: %v", str("CFBundleExecutable"), err)
	}
	if st.Mode()&0o111 == 0 {
		return errorf("bundle: %s is not executable", exe)
	}
	icon, err := os.ReadFile(filepath.Join(*app, "Contents", "Resources", "iconfile.icns"))
	if err != nil {
		return errorf("bundle: %v", err)
	}
	if !bytes.HasPrefix(icon, []byte("icns")) || binary.BigEndian.Uint32(icon[4:8]) != uint32(len(icon)) {
		return errorf("bundle: Resources/iconfile.icns is not an icns file")
	}
	slices, err := machoSlices(exe)
	if err != nil {
		return err
	}
	if *ents == "" {
		fmt.Printf("macbundle: %s ok (version %s, %d Mach-O slice(s), unsigned)\n", *app, *version, len(slices))
		return nil
	}
	wantEnts, err := readPlist(*ents)
	if err != nil {
		return err
	}
	for _, s := range slices {
		got, err := sliceEntitlements(s)
		if err != nil {
			return errorf("%s (%s): %v", exe, s.Cpu, err)
		}
		gotEnts := map[string]any{}
		if _, err := plist.Unmarshal(got, &gotEnts); err != nil {
			return errorf("%s (%s): entitlements blob: %v", exe, s.Cpu, err)
		}
		if !reflect.DeepEqual(gotEnts, wantEnts) {
			return errorf("%s (%s): entitlements %v, want %v", exe, s.Cpu, gotEnts, wantEnts)
		}
	}
	fmt.Printf("macbundle: %s ok (version %s, %d Mach-O slice(s), each signed with %s)\n", *app, *version, len(slices), *ents)
	return nil
}

func readPlist(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if _, err := plist.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// slice is one architecture of a Mach-O file: its parsed headers and a
// reader of its bytes (offsets in load commands are slice-relative).
type slice struct {
	*macho.File
	r io.ReaderAt
}

// machoSlices opens a thin or universal Mach-O.
func machoSlices(path string) ([]slice, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if ff, err := macho.NewFatFile(bytes.NewReader(b)); err == nil {
		var ss []slice
		for _, a := range ff.Arches {
			ss = append(ss, slice{a.File, io.NewSectionReader(bytes.NewReader(b), int64(a.Offset), int64(a.Size))})
		}
		return ss, nil
	} else if !errors.Is(err, macho.ErrNotFat) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := macho.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: not a Mach-O: %w", path, err)
	}
	return []slice{{f, bytes.NewReader(b)}}, nil
}

// Code signature layout (Apple's cs_blobs.h): LC_CODE_SIGNATURE points
// at a SuperBlob (magic 0xfade0cc0: length, count, then count {type,
// offset} entries); the entitlements are the blob of magic 0xfade7171,
// an 8-byte header then the XML plist.
const (
	lcCodeSignature   = 0x1d
	csSuperBlob       = 0xfade0cc0
	csEntitlementsXML = 0xfade7171
)

func sliceEntitlements(f slice) ([]byte, error) {
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 16 || f.ByteOrder.Uint32(raw) != lcCodeSignature {
			continue
		}
		off, size := f.ByteOrder.Uint32(raw[8:]), f.ByteOrder.Uint32(raw[12:])
		sig := make([]byte, size)
		if _, err := f.r.ReadAt(sig, int64(off)); err != nil {
			return nil, fmt.Errorf("code signature: %w", err)
		}
		be := binary.BigEndian
		if len(sig) < 12 || be.Uint32(sig) != csSuperBlob {
			return nil, errors.New("code signature: no SuperBlob")
		}
		n := be.Uint32(sig[8:])
		for i := uint32(0); i < n && 12+8*i+8 <= uint32(len(sig)); i++ {
			bo := be.Uint32(sig[12+8*i+4:])
			if bo+8 > uint32(len(sig)) {
				return nil, errors.New("code signature: blob out of range")
			}
			if be.Uint32(sig[bo:]) == csEntitlementsXML {
				bl := be.Uint32(sig[bo+4:])
				if bl < 8 || bo+bl > uint32(len(sig)) {
					return nil, errors.New("code signature: bad entitlements blob")
				}
				return sig[bo+8 : bo+bl], nil
			}
		}
		return nil, errors.New("signed without entitlements")
	}
	return nil, errors.New("not signed (no LC_CODE_SIGNATURE)")
}

// hasURLScheme reports whether the bundle registers scheme.
func hasURLScheme(info map[string]any, scheme string) bool {
	types, _ := info["CFBundleURLTypes"].([]any)
	for _, t := range types {
		d, _ := t.(map[string]any)
		schemes, _ := d["CFBundleURLSchemes"].([]any)
		for _, s := range schemes {
			if s == scheme {
				return true
			}
		}
	}
	return false
}

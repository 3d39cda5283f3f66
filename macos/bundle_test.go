package macos

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/harkapp/hark/app/control"
	"github.com/stretchr/testify/require"
)

// The data and helper funcs Wails v2.16's packager gives the Info.plist
// template (pkg/buildassets: assetData{Name, Info, OutputFilename}; funcs
// "xml" = HTML escaping, "safeBundleID"). Reproduced here so the template
// is checked on every platform, not only at `wails build` time on a Mac.
type fileAssoc struct{ Ext, Name, Description, IconName, Role string }
type protocol struct{ Scheme, Description, Role string }
type info struct {
	CompanyName, ProductName, ProductVersion string
	Copyright, Comments                      *string
	FileAssociations                         []fileAssoc
	Protocols                                []protocol
}
type assetData struct {
	Name           string
	Info           info
	OutputFilename string
}

var nonAlphaNum = regexp.MustCompile(`[^A-Za-z0-9]+`)

var funcs = template.FuncMap{
	"xml": func(s string) string {
		var b bytes.Buffer
		template.HTMLEscape(&b, []byte(s))
		return b.String()
	},
	"safeBundleID": func(s string) string {
		return strings.Trim(strings.ToLower(nonAlphaNum.ReplaceAllString(s, "-")), "-")
	},
}

func render(t *testing.T, file string, d assetData) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "build", "darwin", file))
	require.NoError(t, err)
	tmpl, err := template.New(file).Funcs(funcs).Parse(string(src))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, tmpl.Execute(&out, d))
	return out.Bytes()
}

// parsePlist decodes an XML property list's top-level dict (strings,
// booleans, integers, arrays and dicts are all the bundle uses).
func parsePlist(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	for {
		tok, err := dec.Token()
		require.NoError(t, err, "no top-level <dict>")
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "dict" {
			v, err := plistValue(dec, se)
			require.NoError(t, err)
			// Nothing but whitespace and the closing tag may follow.
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				if cd, ok := tok.(xml.CharData); ok {
					require.Empty(t, strings.TrimSpace(string(cd)))
				}
			}
			return v.(map[string]any)
		}
	}
}

func plistValue(dec *xml.Decoder, se xml.StartElement) (any, error) {
	switch se.Name.Local {
	case "string", "integer", "real", "date", "data":
		var s string
		if err := dec.DecodeElement(&s, &se); err != nil {
			return nil, err
		}
		if se.Name.Local == "integer" {
			return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		}
		return s, nil
	case "true", "false":
		if err := dec.Skip(); err != nil {
			return nil, err
		}
		return se.Name.Local == "true", nil
	case "array", "dict":
		var arr []any
		m := map[string]any{}
		key := ""
		for {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			switch x := tok.(type) {
			case xml.EndElement:
				if se.Name.Local == "array" {
					return arr, nil
				}
				if key != "" {
					return nil, fmt.Errorf("key %q has no value", key)
				}
				return m, nil
			case xml.CharData:
				if strings.TrimSpace(string(x)) != "" {
					return nil, fmt.Errorf("stray text %q", x)
				}
			case xml.StartElement:
				if se.Name.Local == "dict" && key == "" {
					if x.Name.Local != "key" {
						return nil, fmt.Errorf("<%s> where a <key> belongs", x.Name.Local)
					}
					if err := dec.DecodeElement(&key, &x); err != nil {
						return nil, err
					}
					if _, dup := m[key]; dup {
						return nil, fmt.Errorf("duplicate key %q", key)
					}
					continue
				}
				v, err := plistValue(dec, x)
				if err != nil {
					return nil, err
				}
				if se.Name.Local == "array" {
					arr = append(arr, v)
				} else {
					m[key] = v
					key = ""
				}
			}
		}
	}
	return nil, fmt.Errorf("unknown plist element <%s>", se.Name.Local)
}

// project reads name and outputfilename from wails.json, as Wails does.
func project(t *testing.T) assetData {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "wails.json"))
	require.NoError(t, err)
	var cfg struct {
		Name           string `json:"name"`
		OutputFilename string `json:"outputfilename"`
		Info           struct {
			Protocols []protocol `json:"protocols"`
		} `json:"info"`
	}
	require.NoError(t, json.Unmarshal(b, &cfg))
	require.NotEmpty(t, cfg.Name)
	require.NotEmpty(t, cfg.OutputFilename)
	copyright := `© 2026 Hark & contributors <hark@example.org>`
	comments := "Local speech-to-text"
	return assetData{
		Name:           cfg.Name,
		OutputFilename: cfg.OutputFilename,
		// Wails' defaults when wails.json has no "info": ProductName = name.
		Info: info{ProductName: cfg.Name, ProductVersion: "1.0.0", Copyright: &copyright, Comments: &comments,
			Protocols: cfg.Info.Protocols},
	}
}

func TestInfoPlistRendersForWails(t *testing.T) {
	d := project(t)
	for file, bundleID := range map[string]string{
		"Info.plist":     "com.harkapp.hark",
		"Info.dev.plist": "com.harkapp.hark.dev",
	} {
		p := parsePlist(t, render(t, file, d))
		require.Equal(t, "APPL", p["CFBundlePackageType"], file)
		require.Equal(t, d.OutputFilename, p["CFBundleExecutable"], file)
		require.Equal(t, d.Info.ProductName, p["CFBundleName"], file)
		require.Equal(t, bundleID, p["CFBundleIdentifier"], file)
		require.Equal(t, "1.0.0", p["CFBundleShortVersionString"], file)
		require.Equal(t, "1.0.0", p["CFBundleVersion"], file)
		require.Equal(t, *d.Info.Copyright, p["NSHumanReadableCopyright"], "%s: & and < survive escaping", file)
		require.Equal(t, "iconfile", p["CFBundleIconFile"], "%s: Wails writes Resources/iconfile.icns", file)
		require.Equal(t, true, p["LSUIElement"], "%s: menu-bar app", file)
		require.Equal(t, true, p["NSHighResolutionCapable"], file)
		require.Contains(t, p["NSMicrophoneUsageDescription"], "microphone", file)
		require.NotEmpty(t, p["NSAppleEventsUsageDescription"], file)
		require.Contains(t, p["NSAudioCaptureUsageDescription"], "meeting", file) // the process tap (macos/systemaudio)
		v, err := strconv.ParseFloat(p["LSMinimumSystemVersion"].(string), 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, v, 12.0, "%s: Go 1.26 needs macOS 12", file)
		// hark://dictate/toggle (app/control.ParseURL) for Shortcuts,
		// Raycast, Stream Deck.
		urls := p["CFBundleURLTypes"].([]any)
		require.Len(t, urls, 1, file)
		require.Equal(t, []any{control.URLScheme}, urls[0].(map[string]any)["CFBundleURLSchemes"], file)
		require.Equal(t, "Viewer", urls[0].(map[string]any)["CFBundleTypeRole"], file)
	}
	dev := parsePlist(t, render(t, "Info.dev.plist", d))
	require.Equal(t, map[string]any{"NSAllowsLocalNetworking": true}, dev["NSAppTransportSecurity"])
}

func TestInfoPlistOptionalSections(t *testing.T) {
	d := project(t)
	d.Info.FileAssociations = []fileAssoc{{Ext: "wav", Name: "Wave audio", Role: "Viewer", IconName: "wavicon"}}
	d.Info.Protocols = []protocol{{Scheme: "hark", Role: "Editor"}}
	for _, file := range []string{"Info.plist", "Info.dev.plist"} {
		p := parsePlist(t, render(t, file, d))
		docs := p["CFBundleDocumentTypes"].([]any)
		require.Len(t, docs, 1, file)
		require.Equal(t, []any{"wav"}, docs[0].(map[string]any)["CFBundleTypeExtensions"])
		urls := p["CFBundleURLTypes"].([]any)
		require.Len(t, urls, 1, file)
		require.Equal(t, []any{"hark"}, urls[0].(map[string]any)["CFBundleURLSchemes"])
		require.Equal(t, "com.harkapp.hark.hark", urls[0].(map[string]any)["CFBundleURLName"])
	}
}

func TestEntitlements(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "build", "darwin", "entitlements.plist"))
	require.NoError(t, err)
	p := parsePlist(t, b)
	require.Equal(t, map[string]any{"com.apple.security.device.audio-input": true}, p,
		"microphone under the hardened runtime, and nothing broader")
}

func TestPlistParserRejectsBrokenInput(t *testing.T) {
	for _, bad := range []string{
		`<plist><dict><key>A</key></dict></plist>`,
		`<plist><dict><key>A</key><string>x</string><key>A</key><true/></dict></plist>`,
		`<plist><dict><string>x</string></dict></plist>`,
		`<plist><dict><key>A</key><blob/></dict></plist>`,
	} {
		dec := xml.NewDecoder(strings.NewReader(bad))
		var err error
		for {
			tok, e := dec.Token()
			if e != nil {
				err = e
				break
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "dict" {
				_, err = plistValue(dec, se)
				break
			}
		}
		require.Error(t, err, bad)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"strings"
	"text/template"
)

// The template data Wails v2.16 gives build/darwin/Info.plist
// (pkg/buildassets.assetData with project.Info).
type fileAssoc struct{ Ext, Name, Description, IconName, Role string }
type protocol struct{ Scheme, Description, Role string }
type projectInfo struct {
	CompanyName      string      `json:"companyName"`
	ProductName      string      `json:"productName"`
	ProductVersion   string      `json:"productVersion"`
	Copyright        *string     `json:"copyright"`
	Comments         *string     `json:"comments"`
	FileAssociations []fileAssoc `json:"fileAssociations"`
	Protocols        []protocol  `json:"protocols"`
}
type assetData struct {
	Name           string
	Info           projectInfo
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

// projectData reads wails.json and fills in Wails' defaults
// (internal/project.setDefaults).
func projectData(path, version string) (assetData, error) {
	var p struct {
		Name           string      `json:"name"`
		OutputFilename string      `json:"outputfilename"`
		Info           projectInfo `json:"info"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return assetData{}, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return assetData{}, err
	}
	if p.OutputFilename == "" {
		p.OutputFilename = p.Name
	}
	if p.Info.CompanyName == "" {
		p.Info.CompanyName = p.Name
	}
	if p.Info.ProductName == "" {
		p.Info.ProductName = p.Name
	}
	if p.Info.Copyright == nil {
		c := "Copyright........."
		p.Info.Copyright = &c
	}
	if p.Info.Comments == nil {
		c := "Built using Wails (https://wails.io)"
		p.Info.Comments = &c
	}
	p.Info.ProductVersion = version
	return assetData{Name: p.Name, Info: p.Info, OutputFilename: p.OutputFilename}, nil
}

func plistCmd(args []string) error {
	fs := flag.NewFlagSet("plist", flag.ExitOnError)
	tmplPath := fs.String("template", "build/darwin/Info.plist", "Info.plist template")
	wailsJSON := fs.String("wails", "wails.json", "Wails project file")
	version := fs.String("version", "", "CFBundleShortVersionString")
	out := fs.String("out", "", "output file")
	fs.Parse(args)
	if *version == "" || *out == "" {
		return errorf("plist: -version and -out are required")
	}
	d, err := projectData(*wailsJSON, *version)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(*tmplPath)
	if err != nil {
		return err
	}
	t, err := template.New(*tmplPath).Funcs(funcs).Parse(string(src))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return err
	}
	return os.WriteFile(*out, b.Bytes(), 0o644)
}

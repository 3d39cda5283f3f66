// Command macbundle renders and checks Hark.app's pieces for
// scripts/package-macos, on Linux as on macOS:
//
//	macbundle plist -template build/darwin/Info.plist -wails wails.json -version 1.2.3 -out Info.plist
//	macbundle check -app Hark.app -version 1.2.3 [-entitlements build/darwin/entitlements.plist]
//
// plist renders the Info.plist template with the data `wails build` gives
// it (Wails v2.16 pkg/buildassets: Name, Info, OutputFilename; funcs xml
// and safeBundleID), the version set. check verifies the bundle layout,
// parses Contents/Info.plist with a plist library and checks its keys,
// and with -entitlements checks that every Mach-O slice of the executable
// carries a code signature whose entitlements equal the given file.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: macbundle plist|check [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "plist":
		err = plistCmd(os.Args[2:])
	case "check":
		err = checkCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "macbundle:", err)
		os.Exit(1)
	}
}

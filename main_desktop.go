//go:build desktop

package main

import (
	_ "embed"
	"io"

	"github.com/harkapp/hark/desktop"
)

// windowIcon is Hark's icon (rendered from build/icon/hark.svg by
// scripts/render-icons) for the Linux window and the macOS About panel.
//
//go:embed build/linux/icons/256.png
var windowIcon []byte

func runApp(stderr io.Writer) int { return desktop.Run(windowIcon, stderr) }

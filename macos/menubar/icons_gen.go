//go:build ignore

// icons_gen draws the menu-bar template icons: a microphone, outlined when
// idle, filled with a dot when recording, outlined with three dots while
// transcribing. 36x36 px, shown at 18x18 pt
// (the @2x size of a status-bar glyph). Template images carry only alpha:
// macOS tints them for light, dark and highlighted menu bars.
//
//	go run icons_gen.go   (from macos/menubar)
package main

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

const size = 36

type shape func(x, y float64) bool

func capsule(cx, top, bottom, r float64, filled bool, stroke float64) shape {
	return func(x, y float64) bool {
		// distance to the segment (cx,top+r)-(cx,bottom-r)
		yy := math.Max(top+r, math.Min(bottom-r, y))
		d := math.Hypot(x-cx, y-yy)
		if filled {
			return d <= r
		}
		return d <= r && d >= r-stroke
	}
}

func arc(cx, cy, r, stroke float64) shape { // lower half ring
	return func(x, y float64) bool {
		d := math.Hypot(x-cx, y-cy)
		return y >= cy && d <= r+stroke/2 && d >= r-stroke/2
	}
}

func rect(x0, y0, x1, y1 float64) shape {
	return func(x, y float64) bool { return x >= x0 && x <= x1 && y >= y0 && y <= y1 }
}

func disc(cx, cy, r float64) shape {
	return func(x, y float64) bool { return math.Hypot(x-cx, y-cy) <= r }
}

func draw(name string, shapes ...shape) {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4 // 4x4 supersampling for anti-aliased edges
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			hit := 0
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := float64(px) + (float64(sx)+0.5)/ss
					y := float64(py) + (float64(sy)+0.5)/ss
					for _, s := range shapes {
						if s(x, y) {
							hit++
							break
						}
					}
				}
			}
			img.SetNRGBA(px, py, color.NRGBA{A: uint8(hit * 255 / (ss * ss))})
		}
	}
	f, err := os.Create(name)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		panic(err)
	}
}

func main() {
	body := []shape{
		arc(18, 16, 9, 2.2),
		rect(17, 25, 19, 30),
		rect(12, 29, 24, 31),
	}
	draw("icons/mic.png", append(body, capsule(18, 4, 22, 5, false, 2.2))...)
	draw("icons/mic-recording.png", append(body, capsule(18, 4, 22, 5, true, 0), disc(30, 6, 4.5))...)
	draw("icons/mic-transcribing.png", append(body, capsule(18, 4, 22, 5, false, 2.2), disc(26, 5, 2), disc(30.5, 5, 2), disc(26, 9.5, 2), disc(30.5, 9.5, 2))...)
}

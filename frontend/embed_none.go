//go:build !desktop

package frontend

import "io/fs"

var embedded fs.FS

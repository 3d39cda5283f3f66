//go:build !unix

package bridge

// oNoFollow: no such flag here; serveRecording's Lstat check still refuses
// links.
const oNoFollow = 0

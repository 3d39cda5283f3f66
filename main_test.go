//go:build !desktop

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// A plain build started without arguments says how to get the app.
func TestNoAppMessage(t *testing.T) {
	var b bytes.Buffer
	require.Equal(t, 2, runApp(&b))
	require.Contains(t, b.String(), "wails build")
	require.Contains(t, b.String(), "hark --help")
}

package msltest

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func selftestLib(t testing.TB) *Library {
	b, err := os.ReadFile("testdata/selftest.metal")
	require.NoError(t, err)
	l, err := Open([]Source{{Name: "selftest.metal", Text: string(b)}})
	require.NoError(t, err)
	return l
}

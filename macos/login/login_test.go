package login

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlan(t *testing.T) {
	require.Equal(t, register, plan(NotRegistered, true))
	require.Equal(t, register, plan(RequiresApproval, true))
	require.Equal(t, register, plan(NotFound, true))
	require.Equal(t, none, plan(Enabled, true))

	require.Equal(t, unregister, plan(Enabled, false))
	require.Equal(t, unregister, plan(RequiresApproval, false))
	require.Equal(t, none, plan(NotRegistered, false))
	require.Equal(t, none, plan(NotFound, false))
}

func TestResult(t *testing.T) {
	require.NoError(t, result(Enabled, true))
	require.ErrorIs(t, result(RequiresApproval, true), ErrRequiresApproval)
	require.ErrorContains(t, result(NotFound, true), "status not-found")
	require.NoError(t, result(NotRegistered, false))
	require.NoError(t, result(RequiresApproval, false), "unregistered as far as launching goes")
	require.ErrorContains(t, result(Enabled, false), "still on")
}

func TestStatusString(t *testing.T) {
	require.Equal(t, "enabled", Enabled.String())
	require.Equal(t, "requires-approval", RequiresApproval.String())
	require.Equal(t, "not-registered", NotRegistered.String())
	require.Equal(t, "not-found", NotFound.String())
	require.Equal(t, "unknown(9)", Status(9).String())
}

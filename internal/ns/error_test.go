package ns

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorMessage(t *testing.T) {
	e := &Error{Domain: "SMAppErrorDomain", Code: 1, Description: "Operation not permitted"}
	require.Equal(t, "Operation not permitted (SMAppErrorDomain 1)", e.Error())
	require.Equal(t, "Operation not permitted", (&Error{Description: "Operation not permitted"}).Error())
	require.Equal(t, "NSCocoaErrorDomain error 4", (&Error{Domain: "NSCocoaErrorDomain", Code: 4}).Error())
	require.Equal(t, "NSError code -1", (&Error{Code: -1}).Error())

	// Callers wrap it; the typed value must survive for errors.As.
	var got *Error
	require.True(t, errors.As(fmt.Errorf("login: %w", e), &got))
	require.Equal(t, 1, got.Code)
}

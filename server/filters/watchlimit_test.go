package filters

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestWatchLimits: past the server-wide or the per-user limit a watch is
// 429 Too Many Requests with Retry-After; a release makes room again.
func TestWatchLimits(t *testing.T) {
	l := NewWatchLimits(3, 2)
	a1, err := l.Acquire("a")
	require.NoError(t, err)
	_, err = l.Acquire("a")
	require.NoError(t, err)
	_, err = l.Acquire("a")
	var st apierrors.APIStatus
	require.True(t, errors.As(err, &st) && apierrors.IsTooManyRequests(err), "per-user limit: %v", err)
	require.Equal(t, "Too many requests, please try again later.", st.Status().Message)
	require.EqualValues(t, 1, st.Status().Details.RetryAfterSeconds)
	_, err = l.Acquire("b")
	require.NoError(t, err)
	_, err = l.Acquire("c")
	require.True(t, apierrors.IsTooManyRequests(err), "server-wide limit: %v", err)
	a1()
	a1() // releasing twice counts once
	require.Equal(t, 2, l.Open())
	_, err = l.Acquire("c")
	require.NoError(t, err)

	none := NewWatchLimits(0, 0)
	for range 100 {
		_, err := none.Acquire("a")
		require.NoError(t, err)
	}
}

func TestMemoryLimit(t *testing.T) {
	require.Positive(t, MemoryLimit(), "on Linux one of GOMEMLIMIT, memory.max or MemTotal is known")
}

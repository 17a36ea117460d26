package wire

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLineQueue: bounded at max, Take hands over everything queued in
// order and signals Freed, Close is seen after the last lines, and a queue
// emptied after a burst keeps no large buffer.
func TestLineQueue(t *testing.T) {
	q := NewLineQueue(100)
	require.Zero(t, cap(q.lines), "a new queue holds no buffer")
	for i := range 100 {
		require.True(t, q.TryPush([]byte(fmt.Sprint(i))))
	}
	require.False(t, q.TryPush([]byte("over")), "the 101st line")
	<-q.Ready()
	lines, closed := q.Take(nil)
	require.False(t, closed)
	require.Len(t, lines, 100)
	for i, l := range lines {
		require.Equal(t, fmt.Sprint(i), string(l))
	}
	require.Len(t, q.Freed(), 1, "take signals freed")
	require.Zero(t, cap(q.lines), "the burst's buffer is dropped")

	require.True(t, q.TryPush([]byte("last")))
	q.Close()
	<-q.Ready()
	lines, closed = q.Take(lines)
	require.True(t, closed)
	require.Equal(t, [][]byte{[]byte("last")}, lines)
}

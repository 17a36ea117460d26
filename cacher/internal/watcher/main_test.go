package watcher

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no watcher goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

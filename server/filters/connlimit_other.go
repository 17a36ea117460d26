//go:build !unix

package filters

// openFileLimit is 0: the platform has no RLIMIT_NOFILE to size
// MaxConnections from.
func openFileLimit() int { return 0 }

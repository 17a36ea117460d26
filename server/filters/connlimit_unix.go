//go:build unix

package filters

import "syscall"

// openFileLimit is the process's RLIMIT_NOFILE soft limit (0 if unknown
// or unlimited).
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}

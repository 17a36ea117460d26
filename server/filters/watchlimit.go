package filters

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// WatchLimits bound the watch streams open at once, in all and per user,
// so that no reader can hold the memory of the process (and of an etcd
// embedded in it) with idle watches: one HTTP/2 connection carries
// hundreds of them. Past a limit a watch is answered 429 with
// Retry-After, as kube-apiserver answers past its in-flight limits.
type WatchLimits struct {
	max, perUser int // 0: no limit

	mu     sync.Mutex
	open   int
	byUser map[string]int
}

// NewWatchLimits returns the limits; a limit <= 0 is none.
func NewWatchLimits(max, perUser int) *WatchLimits {
	return &WatchLimits{max: max, perUser: perUser, byUser: map[string]int{}}
}

// Acquire counts a watch of user; it returns the function that ends the
// count, and ErrTooManyRequests (with nothing counted) past a limit.
func (l *WatchLimits) Acquire(user string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if (l.max > 0 && l.open >= l.max) || (l.perUser > 0 && l.byUser[user] >= l.perUser) {
		return nil, ErrTooManyRequests()
	}
	l.open++
	l.byUser[user]++
	var once sync.Once
	return func() { once.Do(func() { l.release(user) }) }, nil
}

func (l *WatchLimits) release(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byUser[user]--; l.byUser[user] <= 0 {
		delete(l.byUser, user)
	}
}

// Open is the number of watches counted.
func (l *WatchLimits) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// MemoryLimit is the memory the process may count on: GOMEMLIMIT when
// set, else the cgroup's memory.max (v2) when set, else the machine's
// MemTotal; 0 when none is known.
func MemoryLimit() uint64 {
	if v := debug.SetMemoryLimit(-1); v > 0 && v < math.MaxInt64 {
		return uint64(v)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

package filters

import (
	"log/slog"
	"net"
	"sync"
)

// connectionReserve is how many descriptors of a RLIMIT_NOFILE soft limit
// of n the server leaves to everything else of the process (etcd's files and
// connections, the etcd client, logs): a quarter, at least 256 but at most
// half of n.
func connectionReserve(n int) int {
	return min(max(n/4, 256), n/2)
}

// MaxConnections resolves a configured connection limit: configured when
// positive, none (0) when negative, and for 0 the RLIMIT_NOFILE soft limit
// minus connectionReserve of it (0 when that limit is unknown).
func MaxConnections(configured int) int {
	switch {
	case configured > 0:
		return configured
	case configured < 0:
		return 0
	}
	n := openFileLimit()
	if n <= 0 {
		return 0
	}
	return n - connectionReserve(n)
}

// connLimitListener stops accepting while limit connections it accepted
// are open; new clients then wait in the kernel's listen backlog, which
// costs the process no descriptor. It logs once when it stops accepting
// and once when the open connections have fallen to 90% of the limit.
type connLimitListener struct {
	net.Listener
	limit int
	sem   chan struct{}
	log   *slog.Logger

	closeOnce sync.Once
	closed    chan struct{}

	mu   sync.Mutex
	full bool // stopped accepting since the last "accepting again"
}

// LimitConnections returns l holding at most limit accepted connections
// open (see connLimitListener), logging to log.
func LimitConnections(l net.Listener, limit int, log *slog.Logger) net.Listener {
	return &connLimitListener{Listener: l, limit: limit, sem: make(chan struct{}, limit), log: log,
		closed: make(chan struct{})}
}

// Accept waits for a free slot, then accepts a connection that frees the
// slot when closed.
func (l *connLimitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	default:
		l.mu.Lock()
		if !l.full {
			l.full = true
			l.log.Warn("connection limit reached: not accepting connections until some close",
				"address", l.Addr().String(), "limit", l.limit)
		}
		l.mu.Unlock()
		select {
		case l.sem <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, l: l}, nil
}

// Close closes the listener and ends a waiting Accept.
func (l *connLimitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// release frees one slot.
func (l *connLimitListener) release() {
	<-l.sem
	if len(l.sem) > l.limit*9/10 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		l.full = false
		l.log.Info("accepting connections again", "address", l.Addr().String(), "open", len(l.sem), "limit", l.limit)
	}
}

// limitedConn frees its listener's slot when closed.
type limitedConn struct {
	net.Conn
	l    *connLimitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}

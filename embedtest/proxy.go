package embedtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
)

// Proxy is a TCP proxy in front of one etcd endpoint that can be frozen:
// while frozen it accepts connections but passes no byte either way, which
// is how a stopped (SIGSTOP) or wedged etcd looks to its clients; Thaw lets
// everything through again, held bytes included. It can also be killed:
// Kill closes every connection and the port (connection refused, as with a
// dead etcd process) at once, where stopping an embedded etcd with open
// watches takes 7 s; Revive listens on the same port again. Close it when
// done.
type Proxy struct {
	// Endpoint is the proxy's URL, with the target's scheme.
	Endpoint string

	target string
	addr   string
	done   chan struct{} // closed by Close

	mu     sync.Mutex   // guards ln, thawed, conns
	ln     net.Listener // nil while killed
	thawed chan struct{}
	conns  map[net.Conn]struct{}

	wg        sync.WaitGroup
	closeOnce sync.Once
}

// StartProxy starts a Proxy on a free loopback port in front of endpoint
// (an etcd client URL such as http://127.0.0.1:2379).
func StartProxy(endpoint string) (*Proxy, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("embedtest: proxy target %q is not a URL", endpoint)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	thawed := make(chan struct{})
	close(thawed)
	p := &Proxy{Endpoint: u.Scheme + "://" + ln.Addr().String(), target: u.Host, addr: ln.Addr().String(), ln: ln,
		done: make(chan struct{}), thawed: thawed, conns: make(map[net.Conn]struct{})}
	p.wg.Go(func() { p.accept(ln) })
	return p, nil
}

// Kill closes the port and every connection.
func (p *Proxy) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Revive listens on the proxy's port again after Kill.
func (p *Proxy) Revive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.ln = ln
	p.wg.Go(func() { p.accept(ln) })
	return nil
}

// Freeze stops passing bytes, on open and new connections alike.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default: // already frozen
	}
}

// Thaw passes bytes again.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
}

// Close stops the proxy, closes every connection and waits for its goroutines.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		close(p.done)
		p.Kill()
		p.wg.Wait()
	})
}

// wait blocks while the proxy is frozen; false when it is closed.
func (p *Proxy) wait() bool {
	p.mu.Lock()
	thawed := p.thawed
	p.mu.Unlock()
	select {
	case <-thawed:
		return true
	case <-p.done:
		return false
	}
}

// track adds c to the connections Close closes; false when closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		c.Close()
		return false
	default:
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve connects c to the target once thawed and copies both ways.
func (p *Proxy) serve(c net.Conn) {
	defer p.untrack(c)
	if !p.wait() {
		return
	}
	t, err := net.Dial("tcp", p.target)
	if err != nil {
		return // the client sees its connection closed, as with a dead etcd
	}
	if !p.track(t) {
		return
	}
	defer p.untrack(t)
	var both sync.WaitGroup
	both.Go(func() { p.copy(t, c); t.Close() })
	p.copy(c, t)
	c.Close()
	both.Wait()
}

// copy passes bytes from src to dst, holding them while frozen.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				_ = dst.(*net.TCPConn).CloseWrite()
			}
			return
		}
	}
}

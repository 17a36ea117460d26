package embedtest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
)

// peerProxy stands in front of one member's peer port: the other members
// reach it through the proxy (closing it closes their connections),
// which can hold the traffic of chosen links, as a network partition
// blackholes packets. A link is known by the connection's first request:
// etcd's peer transport names its sender in the X-Server-From header, and
// every connection is dialed by one sender. While a link is cut, the bytes
// it carries are held (no byte passes either way, nothing is closed);
// when it heals they pass.
type peerProxy struct {
	target string // the member's real peer address
	ln     net.Listener

	mu      sync.Mutex
	cut     func(sender string) bool // nil: nothing is cut
	healed  chan struct{}            // closed when the links heal
	conns   map[net.Conn]struct{}
	closing bool
	wg      sync.WaitGroup
}

func startPeerProxy(target string) (*peerProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &peerProxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}, healed: make(chan struct{})}
	close(p.healed)
	p.wg.Go(p.accept)
	return p, nil
}

// addr is the proxy's address, which the member advertises.
func (p *peerProxy) addr() string { return p.ln.Addr().String() }

// setCut holds the traffic of the connections whose sender cut reports
// (nil: of none).
func (p *peerProxy) setCut(cut func(sender string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut == nil {
		select {
		case <-p.healed:
		default:
			close(p.healed)
		}
		return
	}
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default:
	}
}

// pass blocks while sender's link is cut; false when the proxy closes.
func (p *peerProxy) pass(sender string) bool {
	for {
		p.mu.Lock()
		cut, healed, closing := p.cut, p.healed, p.closing
		p.mu.Unlock()
		if closing {
			return false
		}
		if cut == nil || !cut(sender) {
			return true
		}
		<-healed
	}
}

func (p *peerProxy) close() {
	p.mu.Lock()
	p.closing = true
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.setCut(nil)
	p.wg.Wait()
}

func (p *peerProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *peerProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *peerProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve reads the connection's first request head to learn its sender,
// then relays both ways, holding the bytes while the link is cut.
func (p *peerProxy) serve(c net.Conn) {
	defer p.untrack(c)
	br := bufio.NewReader(c)
	var head bytes.Buffer
	sender := ""
	for {
		line, err := br.ReadSlice('\n')
		head.Write(line)
		if err != nil {
			return
		}
		if name, value, ok := strings.Cut(string(line), ":"); ok && strings.EqualFold(strings.TrimSpace(name), "X-Server-From") {
			sender = strings.TrimSpace(value)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
	}
	if !p.pass(sender) {
		return
	}
	t, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(t) {
		return
	}
	defer p.untrack(t)
	if _, err := t.Write(head.Bytes()); err != nil {
		return
	}
	var both sync.WaitGroup
	both.Go(func() { p.relay(t, br, sender); t.Close() })
	p.relay(c, t, sender)
	c.Close()
	both.Wait()
}

func (p *peerProxy) relay(dst net.Conn, src io.Reader, sender string) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass(sender) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

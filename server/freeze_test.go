package server

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// etcdProxy forwards TCP connections to the shared etcd and can freeze
// them: while frozen nothing is forwarded, as with an etcd member that is
// stopped (SIGSTOP) or cut off by the network, so that every request waits
// for its deadline.
type etcdProxy struct {
	ln     net.Listener
	target string
	gate   sync.RWMutex // write-held while frozen
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// newFreezableStore returns an etcd3 store below the test's prefix whose
// client reaches the shared etcd through an etcdProxy.
func newFreezableStore(t *testing.T, resourcePrefix string) (*etcd3.Store, *etcdProxy) {
	t.Helper()
	return newFreezableStoreTimeout(t, resourcePrefix, 0)
}

// newFreezableStoreTimeout is newFreezableStore with the store's request
// timeout (0: the store's default).
func newFreezableStoreTimeout(t *testing.T, resourcePrefix string, requestTimeout time.Duration) (*etcd3.Store, *etcdProxy) {
	t.Helper()
	cleanPrefix(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &etcdProxy{ln: ln, target: strings.TrimPrefix(etcdServer.Endpoints[0], "http://")}
	p.wg.Add(1)
	go p.accept()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + ln.Addr().String()},
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	st, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(t), ResourcePrefix: resourcePrefix, RequestTimeout: requestTimeout})
	require.NoError(t, err)
	t.Cleanup(func() {
		st.Close()
		p.close()
		cli.Close()
	})
	return st, p
}

func (p *etcdProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst, holding what it read while the proxy is frozen.
func (p *etcdProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate.RLock()
			_, werr := dst.Write(buf[:n])
			p.gate.RUnlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				_ = dst.Close()
			}
			return
		}
	}
}

// freeze stops forwarding; thaw resumes it.
func (p *etcdProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		p.gate.Lock()
	}
}

func (p *etcdProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.frozen = false
		p.gate.Unlock()
	}
}

// close thaws, closes every connection and waits for the goroutines.
func (p *etcdProxy) close() {
	p.thaw()
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// serveOn runs srv.Serve on a loopback listener until the test ends and
// returns its address.
func serveOn(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String()
}

package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownGrace bounds how long Serve waits for requests to finish after
// its context ends.
const shutdownGrace = 10 * time.Second

// Close ends every watch stream cleanly (the client sees the stream end
// and may resume from its last RV) and makes new watches answer 503. It
// does not wait for handlers; Serve does. It removes the server's metrics
// from Config.Metrics, so that a new Server can register there. Close is
// idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		if s.metrics != nil {
			s.metrics.unregister()
		}
	})
}

// Serve serves HTTP (HTTPS with Config.TLS) on l until ctx ends, then shuts down gracefully: watch
// streams end at once, other requests get up to 10 s to finish, and l is
// closed. It returns nil after a shutdown caused by ctx, or the error that
// stopped serving. It refuses a listener that is not on loopback unless
// TLS and an Authenticator are configured or AllowInsecureNonLoopback is
// set, and there with AllowAnonymous unless the Authorizer denies
// anonymous writes. It holds at most MaxConnections connections open,
// headers must arrive within ReadHeaderTimeout, and idle keep-alive
// connections close after IdleTimeout. It speaks HTTP/1.1 and HTTP/2 (by
// ALPN over TLS, with prior knowledge over cleartext: h2c), see
// Config.HTTP2MaxStreamsPerConnection.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if err := s.checkExposure(ctx, l); err != nil {
		_ = l.Close()
		return err
	}
	if n := s.maxConnections(); n > 0 {
		l = newConnLimitListener(l, n, s.log)
	}
	if s.cfg.TLS != nil {
		l = tls.NewListener(l, s.serveTLSConfig())
	}
	protocols, http2 := s.httpProtocols()
	hs := &http.Server{
		Protocols:         protocols,
		HTTP2:             http2,
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelInfo), // accept and TLS handshake errors
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		_ = hs.Close()
	}
	return err
}

// ListenAndServe listens on addr and calls Serve. An empty host binds
// 127.0.0.1, not every interface ("0.0.0.0:port" does that); an empty addr
// is DefaultListenAddress.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	l, err := Listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, l)
}

// Listen opens a TCP listener on addr with ListenAndServe's defaults.
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = DefaultListenAddress
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.Listen("tcp", net.JoinHostPort(host, port))
}

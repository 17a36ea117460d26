package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/filters"
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
		l = filters.LimitConnections(l, n, s.log)
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

// maxConnections is Config.MaxConnections resolved: the limit, or 0 for
// none.
func (s *Server) maxConnections() int { return filters.MaxConnections(s.cfg.MaxConnections) }

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

// httpProtocols are the protocols Serve speaks: HTTP/1.1, HTTP/2 over
// TLS and HTTP/2 over cleartext (h2c with prior knowledge), with
// Config.HTTP2MaxStreamsPerConnection.
func (s *Server) httpProtocols() (*http.Protocols, *http.HTTP2Config) {
	p := &http.Protocols{}
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return p, &http.HTTP2Config{MaxConcurrentStreams: s.cfg.HTTP2MaxStreamsPerConnection}
}

// serveTLSConfig is Config.TLS offering "h2" and "http/1.1" by ALPN: a
// listener made with tls.NewListener negotiates only the protocols its
// config names, and net/http adds them only when it makes the listener.
// A config that names its own protocols is kept as it is.
func (s *Server) serveTLSConfig() *tls.Config {
	if len(s.cfg.TLS.NextProtos) > 0 {
		return s.cfg.TLS
	}
	c := s.cfg.TLS.Clone()
	c.NextProtos = []string{"h2", "http/1.1"}
	return c
}

// checkExposure refuses to serve on a listener reachable from other hosts
// (not loopback) without TLS and authentication, or with anonymous access
// that the Authorizer (none allows everything) lets write, unless the
// configuration says so explicitly (AllowInsecureNonLoopback).
func (s *Server) checkExposure(ctx context.Context, l net.Listener) error {
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || addr.IP.IsLoopback() {
		return nil
	}
	if s.cfg.AllowInsecureNonLoopback {
		if s.cfg.TLS == nil || s.cfg.Authenticator == nil || s.cfg.AllowAnonymous {
			s.log.Warn("serving on an address that is not loopback without the exposure checks (AllowInsecureNonLoopback, "+
				"cacher-demo serve --insecure-allow-unauthenticated-non-loopback): whoever reaches it may read and write "+
				"what the Authorizer allows anonymous users, everything without one",
				"address", addr.String(), "tls", s.cfg.TLS != nil, "authenticator", s.cfg.Authenticator != nil,
				"anonymous", s.cfg.AllowAnonymous)
		}
		return nil
	}
	if s.cfg.TLS == nil || s.cfg.Authenticator == nil {
		return fmt.Errorf("server: refusing to serve on %s, which is not a loopback address, without TLS and authentication "+
			"(Config.TLS and Config.Authenticator); set Config.AllowInsecureNonLoopback to do so anyway", addr)
	}
	if !s.cfg.AllowAnonymous {
		return nil
	}
	what, err := s.anonymousWrite(ctx)
	if err != nil {
		return fmt.Errorf("server: asking the Authorizer whether anonymous users may write: %w", err)
	}
	if what != "" {
		return fmt.Errorf("server: refusing to serve on %s, which is not a loopback address, with anonymous access "+
			"(Config.AllowAnonymous) when anonymous users may %s; set a Config.Authorizer that denies them "+
			"(such as ReadAllWriteGroups; cacher-demo serve: --write-groups), turn AllowAnonymous off, "+
			"or set Config.AllowInsecureNonLoopback", addr, what)
	}
	return nil
}

// anonymousWrite asks the Authorizer whether the anonymous user may create
// or delete objects of any resource, and returns what it may do ("" if
// nothing). Without an Authorizer everything is allowed.
func (s *Server) anonymousWrite(ctx context.Context) (string, error) {
	anonymous := auth.Anonymous()
	for _, r := range s.cfg.Resources {
		for _, verb := range []string{"create", "delete"} {
			what := fmt.Sprintf("%s %s.%s", verb, r.Plural, r.Group)
			if s.cfg.Authorizer == nil {
				return what, nil
			}
			a := auth.Attributes{User: anonymous, Verb: verb, ResourceRequest: true,
				APIGroup: r.Group, APIVersion: r.Version, Resource: r.Plural}
			if r.Namespaced {
				a.Namespace = "default"
			}
			if verb == "delete" {
				a.Name = "any"
			}
			ok, _, err := s.cfg.Authorizer.Authorize(ctx, a)
			if err != nil {
				return "", err
			}
			if ok {
				return what, nil
			}
		}
	}
	return "", nil
}

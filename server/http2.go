package server

import (
	"crypto/tls"
	"net/http"
)

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

package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// checkExposure refuses to serve on a listener reachable from other hosts
// (not loopback) without TLS and authentication, or with anonymous access
// that the Authorizer (none allows everything) lets write, unless the
// configuration says so explicitly (AllowInsecureNonLoopback).
func (s *Server) checkExposure(ctx context.Context, l net.Listener) error {
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok || addr.IP.IsLoopback() || s.cfg.AllowInsecureNonLoopback {
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
	anonymous := &User{Name: AnonymousUser, Groups: []string{UnauthenticatedG}}
	for _, r := range s.cfg.Resources {
		for _, verb := range []string{"create", "delete"} {
			what := fmt.Sprintf("%s %s.%s", verb, r.Plural, r.Group)
			if s.cfg.Authorizer == nil {
				return what, nil
			}
			a := Attributes{User: anonymous, Verb: verb, ResourceRequest: true,
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

// SelfSignedCertificate makes a self-signed ECDSA P-256 serving
// certificate, valid for a year, for hosts (IP addresses or DNS names),
// and returns it with its PEM-encoded certificate and key (for example
// for clients to trust it).
func SelfSignedCertificate(hosts ...string) (cert tls.Certificate, certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return cert, nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return cert, nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "listwatch-self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return cert, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return cert, nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, keyPEM, err
}

package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/server/auth"
)

// secureFlags are serve's flags for TLS, authentication and authorization
// and for etcd's client TLS, named as kube-apiserver names them.
type secureFlags struct {
	tlsCert, tlsKey, certDir  string
	tokenFile, clientCA       string
	writeGroups               string
	anonymous                 bool
	insecureNonLoopback       bool
	etcdCA, etcdCert, etcdKey string
}

func (f *secureFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tlsCert, "tls-cert-file", "", "serving certificate (PEM); with --tls-private-key-file serves HTTPS")
	fs.StringVar(&f.tlsKey, "tls-private-key-file", "", "serving certificate's private key (PEM)")
	fs.StringVar(&f.certDir, "cert-dir", "", "serve HTTPS with a serving certificate for 127.0.0.1 and localhost under a new self-signed CA, written here as ca.crt (for clients to trust) and apiserver.crt/apiserver.key (when --tls-cert-file is not given)")
	fs.StringVar(&f.tokenFile, "token-auth-file", "", "bearer tokens, one per line: token,user,uid,\"group1,group2\"")
	fs.StringVar(&f.clientCA, "client-ca-file", "", "CA (PEM) that signs client certificates; the certificate's CN is the user, O the groups (needs HTTPS)")
	fs.BoolVar(&f.anonymous, "anonymous-auth", false, "serve requests without credentials as system:anonymous (for --write-groups to decide) instead of 401")
	fs.StringVar(&f.writeGroups, "write-groups", "", "comma-separated groups allowed to write; every authenticated user may read (default: everyone may do everything)")
	fs.BoolVar(&f.insecureNonLoopback, "insecure-allow-unauthenticated-non-loopback", false,
		"allow serving on a non-loopback address without TLS and authentication")
	fs.StringVar(&f.etcdCA, "etcd-cafile", "", "CA (PEM) of the etcd servers (with --etcd-endpoints)")
	fs.StringVar(&f.etcdCert, "etcd-certfile", "", "client certificate (PEM) for etcd")
	fs.StringVar(&f.etcdKey, "etcd-keyfile", "", "client certificate's key (PEM) for etcd")
}

// serverOptions turns the flags into server settings for listen; it
// returns the path of the certificate clients must trust ("" for plain
// HTTP). A non-loopback listen address without TLS and authentication is
// refused unless --insecure-allow-unauthenticated-non-loopback.
func (f *secureFlags) serverOptions(listen string) (func(*server.Config), string, error) {
	var tlsCfg *tls.Config
	caPath := ""
	switch {
	case f.tlsCert != "" || f.tlsKey != "":
		if f.tlsCert == "" || f.tlsKey == "" {
			return nil, "", fmt.Errorf("%w: --tls-cert-file and --tls-private-key-file go together", errUsage)
		}
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, "", fmt.Errorf("serving certificate: %w", err)
		}
		tlsCfg, caPath = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, f.tlsCert
	case f.certDir != "":
		cert, caPEM, certPEM, keyPEM, err := auth.SelfSignedCertificate("127.0.0.1", "::1", "localhost")
		if err != nil {
			return nil, "", err
		}
		if err := os.MkdirAll(f.certDir, 0o700); err != nil {
			return nil, "", err
		}
		caPath = filepath.Join(f.certDir, "ca.crt")
		if err := os.WriteFile(caPath, caPEM, 0o600); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(f.certDir, "apiserver.crt"), certPEM, 0o600); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(f.certDir, "apiserver.key"), keyPEM, 0o600); err != nil {
			return nil, "", err
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var authn auth.Authenticators
	if f.tokenFile != "" {
		tokens, err := auth.LoadTokenFile(f.tokenFile)
		if err != nil {
			return nil, "", fmt.Errorf("token file: %w", err)
		}
		authn = append(authn, tokens)
	}
	if f.clientCA != "" {
		if tlsCfg == nil {
			return nil, "", fmt.Errorf("%w: --client-ca-file needs HTTPS (--tls-cert-file or --cert-dir)", errUsage)
		}
		pool, err := loadPool(f.clientCA)
		if err != nil {
			return nil, "", err
		}
		tlsCfg.ClientCAs, tlsCfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
		authn = append(authn, auth.ClientCertAuthenticator{})
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, "", fmt.Errorf("%w: --listen %q: %v", errUsage, listen, err)
	}
	exposed := !f.insecureNonLoopback && host != "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		exposed = false
	}
	if exposed && (tlsCfg == nil || len(authn) == 0) {
		return nil, "", fmt.Errorf("%w: refusing to serve on %s without TLS (--tls-cert-file or --cert-dir) and authentication "+
			"(--token-auth-file or --client-ca-file); --insecure-allow-unauthenticated-non-loopback overrides", errUsage, listen)
	}
	if exposed && f.anonymous && f.writeGroups == "" {
		return nil, "", fmt.Errorf("%w: refusing --anonymous-auth on %s without --write-groups: anyone could create and delete "+
			"objects; add --write-groups GROUPS (only their members may write, anonymous users may not) or drop --anonymous-auth",
			errUsage, listen)
	}
	return func(c *server.Config) {
		c.TLS = tlsCfg
		if len(authn) > 0 {
			c.Authenticator = authn
		}
		if f.writeGroups != "" {
			c.Authorizer = auth.ReadAllWriteGroups(strings.Split(f.writeGroups, ",")...)
		}
		c.AllowAnonymous = f.anonymous
		c.AllowInsecureNonLoopback = f.insecureNonLoopback
	}, caPath, nil
}

// describe returns log attributes of the serving security: TLS, who is
// authenticated and how, and what the authorizer allows.
func (f *secureFlags) describe() []any {
	tlsMode := "none (plain HTTP)"
	switch {
	case f.tlsCert != "":
		tlsMode = "certificate " + f.tlsCert
	case f.certDir != "":
		tlsMode = "self-signed, in " + f.certDir
	}
	var authn []string
	if f.tokenFile != "" {
		authn = append(authn, "bearer tokens")
	}
	if f.clientCA != "" {
		authn = append(authn, "client certificates")
	}
	if len(authn) == 0 {
		authn = append(authn, "none (everyone is system:anonymous)")
	} else if f.anonymous {
		authn = append(authn, "anonymous")
	}
	authz := "allow all"
	if f.writeGroups != "" {
		authz = "authenticated users read, writers: " + f.writeGroups
	}
	return []any{"tls", tlsMode, "authentication", strings.Join(authn, ", "), "authorization", authz}
}

// etcdTLS is the etcd client TLS configuration (nil without the flags).
func (f *secureFlags) etcdTLS() (*tls.Config, error) {
	if f.etcdCA == "" && f.etcdCert == "" && f.etcdKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.etcdCA != "" {
		pool, err := loadPool(f.etcdCA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.etcdCert != "" || f.etcdKey != "" {
		cert, err := tls.LoadX509KeyPair(f.etcdCert, f.etcdKey)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// loadPool reads a PEM bundle of CA certificates.
func loadPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificates", path)
	}
	return pool, nil
}

package etcdrun

import (
	"crypto/tls"
	"fmt"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// TLSFiles are PEM files of one side of a TLS connection.
type TLSFiles struct {
	// CertFile and KeyFile are the side's certificate and private key
	// (a client certificate is optional: leave both "").
	CertFile, KeyFile string
	// CAFile is the CA that signs the other side's certificate: a
	// server checks client certificates against it, a client the
	// server's ("" on a client: the system's roots).
	CAFile string
}

// ClientConfig returns the client side configuration.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	info := transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.CAFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcdrun: client TLS: %w", err)
	}
	return cfg, nil
}

// serverInfo is etcd's serving TLS: mutual when CAFile is set.
func (f *TLSFiles) serverInfo() transport.TLSInfo {
	return transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.CAFile,
		ClientCertAuth: f.CAFile != ""}
}

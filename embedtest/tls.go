package embedtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/etcdrun"
)

// TLSFiles are the PEM files of a client-TLS etcd started with
// Options.ClientTLS: the CA that signs both sides, the members' serving
// certificate, and a client certificate the members accept.
type TLSFiles struct {
	CAFile, ServerCertFile, ServerKeyFile, ClientCertFile, ClientKeyFile string
}

// ClientConfig returns the client side TLS configuration: the CA as root
// and the client certificate.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	return f.clientFiles().ClientConfig()
}

// serverFiles are the members' client-facing TLS: mutual, against the CA.
func (f *TLSFiles) serverFiles() *etcdrun.TLSFiles {
	return &etcdrun.TLSFiles{CertFile: f.ServerCertFile, KeyFile: f.ServerKeyFile, CAFile: f.CAFile}
}

// clientFiles are the client side's: the client certificate and the CA.
func (f *TLSFiles) clientFiles() *etcdrun.TLSFiles {
	return &etcdrun.TLSFiles{CertFile: f.ClientCertFile, KeyFile: f.ClientKeyFile, CAFile: f.CAFile}
}

// writeTLSFiles generates a CA, a serving certificate for 127.0.0.1 and
// localhost, and a client certificate (CN root), valid for a day, into dir.
func writeTLSFiles(dir string) (*TLSFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "embedtest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	f := &TLSFiles{
		CAFile: filepath.Join(dir, "ca.crt"), ServerCertFile: filepath.Join(dir, "server.crt"),
		ServerKeyFile: filepath.Join(dir, "server.key"), ClientCertFile: filepath.Join(dir, "client.crt"),
		ClientKeyFile: filepath.Join(dir, "client.key"),
	}
	if err := writePEM(f.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, certFile, keyFile string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyFile, "EC PRIVATE KEY", keyDER)
	}
	if err := issue(2, "etcd", x509.ExtKeyUsageServerAuth, f.ServerCertFile, f.ServerKeyFile); err != nil {
		return nil, err
	}
	if err := issue(3, "root", x509.ExtKeyUsageClientAuth, f.ClientCertFile, f.ClientKeyFile); err != nil {
		return nil, err
	}
	return f, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// newClientFor connects to endpoints, with the client certificate of f
// when f is set.
func newClientFor(endpoints []string, f *TLSFiles) (*clientv3.Client, error) {
	if f == nil {
		return NewClient(endpoints)
	}
	return etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: endpoints, TLSFiles: f.clientFiles()})
}

package embedtest

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestClientTLS: with ClientTLS a member and a three-member cluster serve
// clients over https with mutual TLS; the returned client works and a
// client without the client certificate is refused.
func TestClientTLS(t *testing.T) {
	s := Start(t, Options{ClientTLS: true})
	c := StartCluster(t, Options{ClientTLS: true})
	for name, tc := range map[string]struct {
		cli   *clientv3.Client
		eps   []string
		files *TLSFiles
	}{"single": {s.Client, s.Endpoints, s.TLS}, "cluster": {c.Client, c.Endpoints(), c.TLS}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		for _, ep := range tc.eps {
			if !strings.HasPrefix(ep, "https://") {
				t.Fatalf("%s: endpoint %s is not https", name, ep)
			}
		}
		if _, err := tc.cli.Put(ctx, Prefix(t)+name, "v"); err != nil {
			t.Fatalf("%s: put over TLS: %v", name, err)
		}
		noCert, err := tc.files.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		noCert.Certificates, noCert.GetClientCertificate = nil, func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &tls.Certificate{}, nil
		}
		anon, err := clientv3.New(clientv3.Config{Endpoints: tc.eps, TLS: noCert, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err == nil {
			actx, acancel := context.WithTimeout(ctx, 3*time.Second)
			_, err = anon.Get(actx, "x")
			acancel()
			anon.Close()
		}
		if err == nil {
			t.Errorf("%s: a client without a certificate was served", name)
		}
		cancel()
	}
}

package auth

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSelfSignedCertificate: a CA (CA:TRUE, certificate signing) and a
// serving leaf under it (CA:FALSE, no certificate signing) that verifies
// for its hosts against the CA alone.
func TestSelfSignedCertificate(t *testing.T) {
	_, caPEM, certPEM, _, err := SelfSignedCertificate("127.0.0.1", "localhost")
	require.NoError(t, err)
	parse := func(b []byte) *x509.Certificate {
		block, _ := pem.Decode(b)
		require.NotNil(t, block)
		c, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		return c
	}
	ca, leaf := parse(caPEM), parse(certPEM)
	require.True(t, ca.IsCA)
	require.NotZero(t, ca.KeyUsage&x509.KeyUsageCertSign)
	require.False(t, leaf.IsCA)
	require.True(t, leaf.BasicConstraintsValid)
	require.Zero(t, leaf.KeyUsage&x509.KeyUsageCertSign)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		require.NoError(t, err, host)
	}
}

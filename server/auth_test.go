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
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/server/auth"
)

const testTokens = `# token,user,uid,groups
alice-token,alice,1,"readers"
bob-token,bob,2,"writers,readers"
`

// authEnv is a TLS server with token and client-certificate
// authentication and the ReadAllWriteGroups("writers") policy.
type authEnv struct {
	url       string
	dir       string // PEM files: server-ca.crt, carol.crt, carol.key, ...
	serverPEM []byte
	clientCA  tls.Certificate
}

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	serverCert, serverPEM, _, _, err := auth.SelfSignedCertificate("127.0.0.1")
	require.NoError(t, err)
	clientCA, clientCAPEM := testCA(t, "test client CA")
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(clientCAPEM))
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	st := newStore(t, "/widgets")
	srv, err := New(Config{
		Resources: []Resource{widgets(st)},
		Metrics:   prometheus.NewRegistry(),
		TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool,
			ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12},
		Authenticator: auth.Authenticators{tokens, auth.ClientCertAuthenticator{}},
		Authorizer:    auth.ReadAllWriteGroups("writers"),
	})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	e := &authEnv{url: "https://" + ln.Addr().String(), dir: t.TempDir(), serverPEM: serverPEM, clientCA: clientCA}
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "server-ca.crt"), serverPEM, 0o600))
	return e
}

// testCA makes a certificate authority for client certificates.
func testCA(t *testing.T, name string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	require.NoError(t, err)
	return c, certPEM
}

// clientCert issues a client certificate signed by the client CA and
// writes it as NAME.crt and NAME.key.
func (e *authEnv) clientCert(t *testing.T, cn string, orgs ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(e.clientCA.Certificate[0])
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:   pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, e.clientCA.PrivateKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, cn+".crt"), certPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, cn+".key"), keyPEM, 0o600))
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return c
}

// client is an HTTPS client trusting the server, with certs presented.
func (e *authEnv) client(t *testing.T, certs ...tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(e.serverPEM))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (e *authEnv) do(t *testing.T, c *http.Client, method, path, token, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, e.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body2, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{code: resp.StatusCode, header: resp.Header, body: body2}
}

// TestAuthentication: over TLS, requests without or with a wrong token are
// 401; tokens and client certificates identify users; the example policy
// lets readers read and only writers write (403 worded as Kubernetes);
// health endpoints are open, /metrics is not.
func TestAuthentication(t *testing.T) {
	e := newAuthEnv(t)
	c := e.client(t)
	coll := apiBase + "/namespaces/ns/widgets"
	w := `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"NAME"}}`

	e.do(t, c, http.MethodGet, coll, "", "").status(t, http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
	e.do(t, c, http.MethodGet, coll, "nope", "").status(t, http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
	e.do(t, c, http.MethodGet, "/apis", "", "").status(t, http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
	e.do(t, c, http.MethodGet, "/metrics", "", "").status(t, http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
	require.Equal(t, http.StatusOK, e.do(t, c, http.MethodGet, "/readyz", "", "").code)
	require.Equal(t, http.StatusOK, e.do(t, c, http.MethodGet, "/metrics", "alice-token", "").code)

	require.Equal(t, http.StatusOK, e.do(t, c, http.MethodGet, coll, "alice-token", "").code)
	st := e.do(t, c, http.MethodPost, coll, "alice-token", strings.Replace(w, "NAME", "a1", 1)).
		status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Equal(t, `widgets.demo.listwatch.dev is forbidden: User "alice" cannot create resource "widgets" in API group "demo.listwatch.dev" in the namespace "ns": only members of writers may write`, st.Message)
	r := e.do(t, c, http.MethodPost, coll, "bob-token", strings.Replace(w, "NAME", "b1", 1))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	st = e.do(t, c, http.MethodDelete, coll+"/b1", "alice-token", "").status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Contains(t, st.Message, `widgets.demo.listwatch.dev "b1" is forbidden: User "alice" cannot delete resource "widgets"`)

	carol := e.client(t, e.clientCert(t, "carol", "writers"))
	r = e.do(t, carol, http.MethodPost, coll, "", strings.Replace(w, "NAME", "c1", 1))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	dave := e.client(t, e.clientCert(t, "dave"))
	e.do(t, dave, http.MethodPost, coll, "", strings.Replace(w, "NAME", "d1", 1)).
		status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Equal(t, http.StatusOK, e.do(t, dave, http.MethodGet, coll+"/c1", "", "").code)

	// A certificate from another CA identifies nobody (Go's client does
	// not even present it, as the server names its client CA).
	other, _ := testCA(t, "intruder")
	e.do(t, e.client(t, other), http.MethodGet, coll, "", "").status(t, http.StatusUnauthorized, metav1.StatusReasonUnauthorized)
}

// TestAnonymous: with AllowAnonymous a request without credentials is
// served as system:anonymous for the authorizer to decide; a wrong token
// is still 401.
func TestAnonymous(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	var seen []string
	f := newFixture(t, func(c *Config) {
		c.Authenticator, c.AllowAnonymous = tokens, true
		c.Authorizer = auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (bool, string, error) {
			seen = append(seen, a.User.Name+":"+strings.Join(a.User.Groups, ","))
			return a.Verb == "list", "", nil
		})
	})
	coll := apiBase + "/namespaces/ns/widgets"
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, coll, "", nil).code)
	f.do(http.MethodGet, coll+"/w1", "", nil).status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Equal(t, []string{auth.AnonymousUser + ":" + auth.UnauthenticatedG, auth.AnonymousUser + ":" + auth.UnauthenticatedG}, seen)
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.ts.URL+coll, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestRefuseInsecureNonLoopback: Serve refuses a non-loopback listener
// without TLS and authentication unless told to.
func TestRefuseInsecureNonLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0 here (%v): the refusal needs a non-loopback listener", err)
	}
	srv, err := New(Config{Resources: []Resource{widgets(newStore(t, "/widgets"))}})
	require.NoError(t, err)
	err = srv.Serve(context.Background(), ln)
	require.ErrorContains(t, err, "refusing to serve on")
	require.ErrorContains(t, err, "AllowInsecureNonLoopback")

	ln, err = net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	var logs syncBuffer
	srv, err = New(Config{Resources: []Resource{widgets(newStore(t, "/widgets"))}, AllowInsecureNonLoopback: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	port := ln.Addr().(*net.TCPAddr).Port
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/livez")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	require.Contains(t, logs.String(), "level=WARN msg=\"serving on an address that is not loopback without the exposure checks",
		"serving exposed is said once, at Warn")
}

// TestRefuseAnonymousWritesNonLoopback: with TLS and authentication on a
// non-loopback listener, anonymous access is refused when no Authorizer
// (or one that lets anonymous users write) is set, and served when the
// Authorizer denies anonymous writes.
func TestRefuseAnonymousWritesNonLoopback(t *testing.T) {
	cert, _, _, _, err := auth.SelfSignedCertificate("127.0.0.1")
	require.NoError(t, err)
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	st := newStore(t, "/widgets")
	serve := func(authz auth.Authorizer) error {
		ln, err := net.Listen("tcp", "0.0.0.0:0")
		if err != nil {
			t.Skipf("cannot listen on 0.0.0.0 here (%v): the refusal needs a non-loopback listener", err)
		}
		srv, err := New(Config{Resources: []Resource{widgets(st)}, Authenticator: tokens, AllowAnonymous: true,
			Authorizer: authz, TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Serve checks the set-up first, then returns at once
		return srv.Serve(ctx, ln)
	}
	allowAll := auth.AuthorizerFunc(func(context.Context, auth.Attributes) (bool, string, error) { return true, "", nil })
	for _, authz := range []auth.Authorizer{nil, allowAll} {
		err := serve(authz)
		require.ErrorContains(t, err, "anonymous users may create widgets.demo.listwatch.dev")
		require.ErrorContains(t, err, "--write-groups")
	}
	require.NoError(t, serve(auth.ReadAllWriteGroups("writers")))
}

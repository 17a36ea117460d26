package auth

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// User is the identity a request is served for.
type User struct {
	// Name is the user name, such as "alice" or "system:anonymous".
	Name string
	// UID is an identifier of the user that outlives renames ("" if none).
	UID string
	// Groups are the groups the user is in.
	Groups []string
}

// The identity of requests served without authentication, as Kubernetes
// names it.
const (
	AnonymousUser    = "system:anonymous"
	UnauthenticatedG = "system:unauthenticated"
	AuthenticatedG   = "system:authenticated"
)

// Authenticator identifies the user of a request.
type Authenticator interface {
	// Authenticate returns the request's user and true; false when the
	// request carries no credentials this authenticator knows; an error
	// when it carries such credentials and they are wrong (the request
	// then gets 401, whatever other authenticators say).
	Authenticate(req *http.Request) (*User, bool, error)
}

// Authenticators tries each authenticator in turn; the first that
// recognises the request's credentials decides.
type Authenticators []Authenticator

// Authenticate implements Authenticator.
func (as Authenticators) Authenticate(req *http.Request) (*User, bool, error) {
	for _, a := range as {
		if u, ok, err := a.Authenticate(req); ok || err != nil {
			return u, ok, err
		}
	}
	return nil, false, nil
}

// errInvalidToken is the authentication failure of an unknown bearer token.
var errInvalidToken = errors.New("invalid bearer token")

// TokenAuthenticator authenticates "Authorization: Bearer <token>" from a
// fixed set of tokens (kube-apiserver's --token-auth-file).
type TokenAuthenticator struct {
	tokens map[string]*User
}

// LoadTokenFile reads a token file in kube-apiserver's CSV format: one
// line per token, `token,user,uid[,"group1,group2"]`.
func LoadTokenFile(path string) (*TokenAuthenticator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// ParseTokens reads tokens in LoadTokenFile's format. Blank lines and
// lines starting with # are skipped; a line with fewer than three fields,
// an empty token or user, or a token given twice is an error.
func ParseTokens(r io.Reader) (*TokenAuthenticator, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	a := &TokenAuthenticator{tokens: map[string]*User{}}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < 3 || rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("line %d: want token,user,uid[,groups] with a token and a user", line)
		}
		if _, dup := a.tokens[rec[0]]; dup {
			return nil, fmt.Errorf("line %d: token given twice", line)
		}
		u := &User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		a.tokens[rec[0]] = u
	}
	return a, nil
}

// Authenticate implements Authenticator.
func (a *TokenAuthenticator) Authenticate(req *http.Request) (*User, bool, error) {
	h := req.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return nil, false, nil
	}
	token = strings.TrimSpace(token)
	u, found := a.tokens[token]
	if !found {
		return nil, false, errInvalidToken
	}
	return withAuthenticated(u), true, nil
}

// ClientCertAuthenticator authenticates a request by its TLS client
// certificate, verified by the TLS layer against the client CAs
// (Config.TLS with ClientCAs and ClientAuth VerifyClientCertIfGiven):
// the subject's common name is the user, its organizations the groups, as
// in Kubernetes.
type ClientCertAuthenticator struct{}

// Authenticate implements Authenticator.
func (ClientCertAuthenticator) Authenticate(req *http.Request) (*User, bool, error) {
	if req.TLS == nil || len(req.TLS.VerifiedChains) == 0 || len(req.TLS.VerifiedChains[0]) == 0 {
		return nil, false, nil
	}
	subj := req.TLS.VerifiedChains[0][0].Subject
	if subj.CommonName == "" {
		return nil, false, errors.New("client certificate without a common name")
	}
	return withAuthenticated(&User{Name: subj.CommonName, Groups: subj.Organization}), true, nil
}

// withAuthenticated returns a copy of u in system:authenticated too.
func withAuthenticated(u *User) *User {
	out := &User{Name: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if !slices.Contains(out.Groups, AuthenticatedG) {
		out.Groups = append(out.Groups, AuthenticatedG)
	}
	return out
}

type userKey struct{}

// WithUser returns a copy of ctx that carries u as the request's user.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user a request is served for (the anonymous user
// when the server authenticates nobody).
func UserFrom(ctx context.Context) *User {
	if u, ok := ctx.Value(userKey{}).(*User); ok {
		return u
	}
	return Anonymous()
}

// Anonymous returns the user of a request served without authentication.
func Anonymous() *User {
	return &User{Name: AnonymousUser, Groups: []string{UnauthenticatedG}}
}

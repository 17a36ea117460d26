package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseTokens: a token file's users, with their groups and
// system:authenticated, authenticate by bearer token; other schemes are
// not the token authenticator's; malformed files are errors.
func TestParseTokens(t *testing.T) {
	a, err := ParseTokens(strings.NewReader("t1,u1,1\n\nt2,u2,2,\"g1, g2\"\n"))
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Authorization", "Bearer t2")
	u, ok, err := a.Authenticate(req)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, &User{Name: "u2", UID: "2", Groups: []string{"g1", "g2", AuthenticatedG}}, u)
	req.Header.Set("Authorization", "Basic xyz")
	_, ok, err = a.Authenticate(req)
	require.NoError(t, err)
	require.False(t, ok, "other schemes are not this authenticator's")
	for _, bad := range []string{"t1,u1\n", ",u1,1\n", "t1,,1\n", "t1,u1,1\nt1,u2,2\n", "t1,\"u1,1\n"} {
		_, err := ParseTokens(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}

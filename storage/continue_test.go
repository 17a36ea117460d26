package storage

import (
	"encoding/base64"
	"strings"
	"testing"
)

func token(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }

func TestContinueTokenRoundTrip(t *testing.T) {
	tok, err := EncodeContinue("/reg/widgets/ns/b\x00", "/reg/widgets/", 42)
	if err != nil {
		t.Fatal(err)
	}
	// The format Kubernetes uses: base64url JSON, start key relative to the prefix.
	if want := token(`{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}`); tok != want {
		t.Fatalf("token %q, want %q", tok, want)
	}
	cases := []struct {
		name, next, prefix string
		rv                 int64
		wantErr            bool
	}{
		{"basic", "/widgets/ns/b\x00", "/widgets/", 12, false},
		{"namespace list", "/widgets/ns/b\x00", "/widgets/ns/", 7, false},
		{"latest", "/widgets/a", "/widgets/", -1, false},
		{"outside the prefix", "/other/x\x00", "/widgets/", 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := EncodeContinue(tc.next, tc.prefix, tc.rv)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			key, rv, err := DecodeContinue(tok, tc.prefix)
			if err != nil || key != tc.next || rv != tc.rv {
				t.Fatalf("decoded %q@%d (%v), want %q@%d", key, rv, err, tc.next, tc.rv)
			}
		})
	}
}

func TestDecodeContinueRejectsBadTokens(t *testing.T) {
	for _, tok := range []string{
		"", "%%%", token(`[]`), token(`{"v":"x","rv":1,"start":"a"}`),
		token(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), token(`{"v":"meta.k8s.io/v1","rv":-2,"start":"a"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":""}`), token(`{"v":"meta.k8s.io/v1","rv":1,"start":"../../x"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":"/a/./b"}`),
	} {
		if key, rv, err := DecodeContinue(tok, "/widgets/"); err == nil {
			t.Errorf("token %q accepted as %q@%d", tok, key, rv)
		}
	}
}

// FuzzDecodeContinue: no token makes decoding panic, escape the prefix or
// yield a dot segment or an invalid revision.
func FuzzDecodeContinue(f *testing.F) {
	for _, seed := range []string{
		token(`{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}`),
		token(`{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":"../../x"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":"/a/./b"}`),
		token(`{"v":"x","rv":1,"start":"a"}`),
		"%%%", "", "e30",
	} {
		f.Add(seed)
	}
	const prefix = "/reg/widgets/"
	f.Fuzz(func(t *testing.T, tok string) {
		key, rv, err := DecodeContinue(tok, prefix)
		if err != nil {
			return
		}
		if !strings.HasPrefix(key, prefix) || len(key) == len(prefix) {
			t.Fatalf("decoded key %q escapes or equals the prefix", key)
		}
		if rv == 0 || rv < -1 {
			t.Fatalf("accepted rv %d", rv)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("decoded key %q has a dot segment", key)
			}
		}
	})
}

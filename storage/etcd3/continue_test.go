package etcd3

import (
	"strings"
	"testing"
)

func TestContinueTokenRoundTrip(t *testing.T) {
	tok, err := encodeContinue("/reg/widgets/ns/b\x00", "/reg/widgets/", 42)
	if err != nil {
		t.Fatal(err)
	}
	// The format Kubernetes uses: base64url JSON, start key relative to the prefix.
	if want := token(`{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}`); tok != want {
		t.Fatalf("token %q, want %q", tok, want)
	}
	key, rv, err := decodeContinue(tok, "/other/widgets/")
	if err != nil || key != "/other/widgets/ns/b\x00" || rv != 42 {
		t.Fatalf("decoded %q %d %v", key, rv, err)
	}
	if _, err := encodeContinue("/elsewhere/x", "/reg/widgets/", 1); err == nil {
		t.Fatal("encoded a key outside the prefix")
	}
}

func FuzzDecodeContinue(f *testing.F) {
	for _, seed := range []string{
		token(`{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}`),
		token(`{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":"../../x"}`),
		token(`{"v":"meta.k8s.io/v1","rv":1,"start":"/a/./b"}`),
		token(`{"v":"x","rv":1,"start":"a"}`),
		"%%%", "",
	} {
		f.Add(seed)
	}
	const prefix = "/reg/widgets/"
	f.Fuzz(func(t *testing.T, tok string) {
		key, rv, err := decodeContinue(tok, prefix)
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

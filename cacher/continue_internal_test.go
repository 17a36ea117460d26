package cacher

import (
	"strings"
	"testing"
)

func TestContinueTokenRoundTrip(t *testing.T) {
	cases := []struct {
		name, next, prefix string
		rv                 int64
		wantErr            bool
	}{
		{"basic", "/widgets/ns/b\x00", "/widgets/", 12, false},
		{"namespace list", "/widgets/ns/b\x00", "/widgets/ns/", 7, false},
		{"outside the prefix", "/other/x\x00", "/widgets/", 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := encodeContinue(tc.next, tc.prefix, tc.rv)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			key, rv, err := decodeContinue(tok, tc.prefix)
			if err != nil || key != tc.next || rv != tc.rv {
				t.Fatalf("decoded %q@%d (%v), want %q@%d", key, rv, err, tc.next, tc.rv)
			}
		})
	}
}

// FuzzDecodeContinue: no token makes decoding panic or escape the prefix.
func FuzzDecodeContinue(f *testing.F) {
	for _, s := range []string{"", "e30", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiIuLi94In0",
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJucy9iIn0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		key, _, err := decodeContinue(tok, "/widgets/")
		if err == nil && !strings.HasPrefix(key, "/widgets/") {
			t.Fatalf("token %q decodes to %q outside the prefix", tok, key)
		}
	})
}

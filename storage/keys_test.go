package storage

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	cases := []struct {
		key       string
		recursive bool
		wantErr   string // "" = valid
	}{
		{"/widgets/ns/a", false, ""},
		{"/widgets/", false, ""},
		{"/widgets", true, ""},
		{"/widgets/ns", true, ""},
		{"/widgets", false, "lacks resource prefix"},
		{"/widgetsx/a", false, "lacks resource prefix"},
		{"/widgetsx", true, "lacks resource prefix"},
		{"/other/a", false, "lacks resource prefix"},
		{"", false, "empty key"},
		{"/", true, "empty key"},
		{"/widgets/../secrets/a", false, "invalid key"},
		{"/widgets/./a", false, "invalid key"},
		{"/widgets/a\x00b", false, "invalid key"},
	}
	for _, tc := range cases {
		err := ValidateKey(tc.key, "/widgets", tc.recursive)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("ValidateKey(%q, recursive=%v) = %v, want nil", tc.key, tc.recursive, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ValidateKey(%q, recursive=%v) = %v, want ErrInvalidArgument with %q", tc.key, tc.recursive, err, tc.wantErr)
		}
	}
	if err := ValidateKey("/anything/at/all", "", false); err != nil {
		t.Errorf("empty resource prefix rejected a key: %v", err)
	}
}

// Validating a valid key, which every request does, allocates nothing.
func TestValidateKeyDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		key       string
		recursive bool
	}{{"/widgets/ns/a", false}, {"/widgets/ns", true}, {"/widgets", true}} {
		allocs := testing.AllocsPerRun(100, func() {
			if err := ValidateKey(tc.key, "/widgets/", tc.recursive); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ValidateKey(%q, recursive=%v): %.0f allocations, want 0", tc.key, tc.recursive, allocs)
		}
	}
}

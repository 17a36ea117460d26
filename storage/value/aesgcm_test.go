package value

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func key(name string, b byte) AESGCMKey {
	return AESGCMKey{Name: name, Secret: bytes.Repeat([]byte{b}, 32)}
}

func mustAESGCM(t *testing.T, cfg AESGCMConfig) *AESGCM {
	t.Helper()
	tr, err := NewAESGCM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestAESGCMRoundTripAndFormat(t *testing.T) {
	ctx := context.Background()
	tr := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("k1", 1)}})
	plain := []byte(`{"secret":"hunter2"}`)
	ad := DefaultContext("/registry/widgets/a")
	enc, err := tr.TransformToStorage(ctx, plain, ad)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(enc, []byte(AESGCMPrefix+"k1:")) || bytes.Contains(enc, []byte("hunter2")) {
		t.Fatalf("stored form %q", enc)
	}
	enc2, _ := tr.TransformToStorage(ctx, plain, ad)
	if bytes.Equal(enc, enc2) {
		t.Fatal("two encryptions are equal: nonce not random")
	}
	got, stale, err := tr.TransformFromStorage(ctx, enc, ad)
	if err != nil || stale || !bytes.Equal(got, plain) {
		t.Fatalf("decrypt: %q stale=%v err=%v", got, stale, err)
	}
}

func TestAESGCMErrors(t *testing.T) {
	ctx := context.Background()
	ad := DefaultContext("/k")
	tr := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("k1", 1)}})
	enc, _ := tr.TransformToStorage(ctx, []byte("data"), ad)
	tampered := bytes.Clone(enc)
	tampered[len(tampered)-1] ^= 1
	sameNameOtherSecret := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("k1", 2)}})
	otherName := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("k2", 1)}})
	for _, tc := range []struct {
		name string
		tr   *AESGCM
		data []byte
		ad   Context
	}{
		{"wrong secret", sameNameOtherSecret, enc, ad},
		{"unknown key name", otherName, enc, ad},
		{"tampered", tr, tampered, ad},
		{"moved to another key", tr, enc, DefaultContext("/other")},
		{"plaintext", tr, []byte("data"), ad},
		{"truncated", tr, enc[:len(AESGCMPrefix)+5], ad},
		{"no name", tr, []byte(AESGCMPrefix + "k1"), ad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := tc.tr.TransformFromStorage(ctx, tc.data, tc.ad)
			if !errors.Is(err, ErrDecrypt) || out != nil {
				t.Fatalf("got %q, %v; want ErrDecrypt", out, err)
			}
		})
	}
}

func TestAESGCMRotationMarksStale(t *testing.T) {
	ctx := context.Background()
	ad := DefaultContext("/k")
	old := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("old", 1)}})
	enc, _ := old.TransformToStorage(ctx, []byte("data"), ad)
	rotated := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("new", 2), key("old", 1)}})
	got, stale, err := rotated.TransformFromStorage(ctx, enc, ad)
	if err != nil || !stale || string(got) != "data" {
		t.Fatalf("read old value: %q stale=%v err=%v", got, stale, err)
	}
	enc2, _ := rotated.TransformToStorage(ctx, got, ad)
	if !bytes.HasPrefix(enc2, []byte(AESGCMPrefix+"new:")) {
		t.Fatalf("rewrite not with the first key: %q", enc2)
	}
	lenient := mustAESGCM(t, AESGCMConfig{Keys: []AESGCMKey{key("new", 2)}, AllowPlaintext: true})
	if got, stale, err := lenient.TransformFromStorage(ctx, []byte("plain"), ad); err != nil || !stale || string(got) != "plain" {
		t.Fatalf("plaintext with AllowPlaintext: %q %v %v", got, stale, err)
	}
}

func TestNewAESGCMValidation(t *testing.T) {
	for _, cfg := range []AESGCMConfig{
		{},
		{Keys: []AESGCMKey{{Name: "", Secret: make([]byte, 32)}}},
		{Keys: []AESGCMKey{{Name: "a:b", Secret: make([]byte, 32)}}},
		{Keys: []AESGCMKey{{Name: "a", Secret: make([]byte, 7)}}},
		{Keys: []AESGCMKey{key("a", 1), key("a", 2)}},
	} {
		if _, err := NewAESGCM(cfg); err == nil {
			t.Errorf("NewAESGCM(%+v) succeeded", cfg)
		}
	}
}

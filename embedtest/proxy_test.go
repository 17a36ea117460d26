package embedtest

import (
	"context"
	"testing"
	"time"
)

// TestProxyFreezeThaw: through a frozen or killed proxy a read gets no
// answer within its deadline; after Thaw or Revive the same client reads again.
func TestProxyFreezeThaw(t *testing.T) {
	s := Start(t)
	p, err := StartProxy(s.Endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cli, err := NewClient([]string{p.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	get := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := cli.Get(ctx, Prefix(t)+"k")
		return err
	}
	if err := get(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	p.Freeze()
	if err := get(300 * time.Millisecond); err == nil {
		t.Fatal("read through a frozen proxy succeeded")
	}
	p.Thaw()
	if err := get(5 * time.Second); err != nil {
		t.Fatalf("read after Thaw: %v", err)
	}
	p.Kill()
	if err := get(300 * time.Millisecond); err == nil {
		t.Fatal("read through a killed proxy succeeded")
	}
	if err := p.Revive(); err != nil {
		t.Fatal(err)
	}
	if err := get(5 * time.Second); err != nil {
		t.Fatalf("read after Revive: %v", err)
	}
}

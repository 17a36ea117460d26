package etcd3

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestEtcdUnavailable stops etcd under a store: requests fail with a typed
// timeout or unreachable error rather than hanging or an untyped error.
func TestEtcdUnavailable(t *testing.T) {
	srv, err := embedtest.StartServer(embedtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// A client of our own that outlives the server.
	cli, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, err := New(Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	srv.Close()

	for name, call := range map[string]func(ctx context.Context) error{
		"get": func(ctx context.Context) error {
			return s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{})
		},
		"create": func(ctx context.Context) error { return s.Create(ctx, "/widgets/ns/b", testWidget("b", nil), nil, 0) },
		"list": func(ctx context.Context) error {
			return s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, &widget.WidgetList{})
		},
		"current RV": func(ctx context.Context) error { _, err := s.GetCurrentResourceVersion(ctx); return err },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
			defer cancel()
			err := call(ctx)
			if !errors.Is(err, storage.ErrTimeout) && !errors.Is(err, storage.ErrUnreachable) {
				t.Fatalf("with etcd down: %v (%T)", err, err)
			}
		})
	}
}

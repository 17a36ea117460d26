package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/manager"
)

// TestLeaderCommandPrintsTheLeader: `cacher-demo leader` says there is no
// leader, then names the manager that was elected.
func TestLeaderCommandPrintsTheLeader(t *testing.T) {
	srv, err := etcdrun.StartServer(etcdrun.ServerConfig{NoFsync: true,
		ClientURLs: []string{"http://127.0.0.1:0"}, PeerURLs: []string{"http://127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: srv.Endpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	args := []string{"leader", "--etcd-endpoints", strings.Join(srv.Endpoints, ","), "--key", "/leader/demo"}

	var out bytes.Buffer
	if err := run(ctx, args, &out, io.Discard); !errors.Is(err, manager.ErrNoLeader) || !strings.Contains(out.String(), "no leader at /leader/demo") {
		t.Fatalf("before any election: err %v, output %q", err, out.String())
	}

	m, err := manager.New(manager.Options{Name: "demo", LeaderElection: &manager.LeaderElection{
		Client: cli, Key: "/leader/demo", Identity: "replica-1", LeaseDuration: 2 * time.Second, ReleaseOnCancel: true}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	defer func() { stop(); <-done }()
	select {
	case <-m.Elected():
	case <-ctx.Done():
		t.Fatal("not elected")
	}
	out.Reset()
	if err := run(ctx, args, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "leader replica-1 (key /leader/demo/") {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}

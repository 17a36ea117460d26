package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/manager"
)

// runLeader prints who leads a manager's leader election, read from etcd
// (manager.CurrentLeader).
func runLeader(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("leader", stderr)
	endpoints := fs.String("etcd-endpoints", "http://127.0.0.1:2379", "comma-separated URLs of the etcd cluster")
	key := fs.String("key", "", "the election key (manager.LeaderElection.Key), such as /leader/widget-controllers")
	timeout := fs.Duration("timeout", 5*time.Second, "deadline of the etcd read")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *key == "" {
		return fmt.Errorf("%w: --key is required", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cli, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: strings.Split(*endpoints, ",")})
	if err != nil {
		return err
	}
	defer cli.Close()
	l, err := manager.CurrentLeader(ctx, cli, *key)
	if errors.Is(err, manager.ErrNoLeader) {
		fmt.Fprintf(stdout, "no leader at %s\n", *key)
		return err
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leader %s (key %s, revision %d, lease %x)\n", l.Identity, l.Key, l.Revision, l.Lease)
	return nil
}

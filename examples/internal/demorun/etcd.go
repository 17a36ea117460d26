package demorun

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/etcdrun"
)

// etcdMember is the etcd a demo stores in: the one its caller gave, or a
// temporary embedded member without fsync (a demo keeps nothing).
type etcdMember struct {
	// Client talks to it.
	Client *clientv3.Client
	server *etcdrun.Server // nil when the caller gave Client
}

// startEtcd returns an etcdMember over cli, or over a member it starts
// when cli is nil; Close stops what it started.
func startEtcd(ctx context.Context, cli *clientv3.Client) (*etcdMember, error) {
	if cli != nil {
		return &etcdMember{Client: cli}, nil
	}
	e, err := etcdrun.StartServer(etcdrun.ServerConfig{NoFsync: true,
		ClientURLs: []string{"http://127.0.0.1:0"}, PeerURLs: []string{"http://127.0.0.1:0"}})
	if err != nil {
		return nil, err
	}
	if cli, err = etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: e.Endpoints}); err != nil {
		e.Close()
		return nil, err
	}
	return &etcdMember{Client: cli, server: e}, nil
}

// Close closes the client and the member if startEtcd started them
// (nil-safe).
func (e *etcdMember) Close() {
	if e == nil || e.server == nil {
		return
	}
	e.Client.Close()
	e.server.Close()
}

// Package etcdrun runs etcd for production use: it starts an embedded etcd
// member (StartServer: data directory, client and peer URLs, TLS, fsync) and
// connects clients to any etcd (NewClient, Connect) with the dial,
// keepalive and reconnect settings that make an outage short and visible:
//
//   - reconnect attempts back off to at most MaxBackoff (1 s), so requests
//     succeed within about a second of etcd coming back (gRPC's own default
//     grows to 2 min);
//   - keepalive pings find a frozen etcd (a stopped process, a silent
//     network) and close its connection;
//   - Connect and Ping are bounded and fail with a storage.ErrUnavailable
//     error that names the endpoints and the last dial or RPC error.
//
// It does not import testing; the embedtest package builds its test servers
// on it.
//
//	srv, err := etcdrun.StartServer(etcdrun.ServerConfig{Dir: "/var/lib/app/etcd"})
//	...
//	defer srv.Close()
//	cli, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: srv.Endpoints})
package etcdrun

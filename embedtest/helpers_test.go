package embedtest

import clientv3 "go.etcd.io/etcd/client/v3"

func clientv3WithRev(rev int64) clientv3.OpOption { return clientv3.WithRev(rev) }

func clientv3WithPrefix() clientv3.OpOption       { return clientv3.WithPrefix() }
func clientv3WithSerializable() clientv3.OpOption { return clientv3.WithSerializable() }

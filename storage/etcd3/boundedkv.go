package etcd3

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// boundedKV is the store's view of etcd's KV API (the Get and Txn it uses): each call is bounded by
// the request timeout, fails at once while etcd is known to be down with
// no connection up (or frozen, see Health), and reports its outcome to the
// store's Health (see Health.observe for the errors it returns).
type boundedKV struct {
	kv      clientv3.KV
	timeout time.Duration // <= 0: only the caller's context bounds a call
	health  *Health
}

// call runs fn, a read (write false) or a request that may change etcd's
// state, with ctx bounded by timeout (<= 0: not bounded).
func (b *boundedKV) call(ctx context.Context, timeout time.Duration, write bool, fn func(ctx context.Context) error) error {
	if err := b.health.failFast(); err != nil {
		return err
	}
	notReady := write && !b.health.ready()
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	return b.health.observe(ctx, rctx, timeout, write, notReady, fn(rctx))
}

// Get is clientv3.KV's Get, bounded.
func (b *boundedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (resp *clientv3.GetResponse, err error) {
	err = b.call(ctx, b.timeout, false, func(ctx context.Context) (err error) {
		resp, err = b.kv.Get(ctx, key, opts...)
		return err
	})
	return resp, err
}

// Txn is clientv3.KV's Txn: the transaction is bounded from Commit.
func (b *boundedKV) Txn(ctx context.Context) clientv3.Txn {
	return &boundedTxn{b: b, ctx: ctx}
}

// boundedTxn collects a transaction and sends it, bounded, on Commit.
type boundedTxn struct {
	b                *boundedKV
	ctx              context.Context
	cmps             []clientv3.Cmp
	thenOps, elseOps []clientv3.Op
}

// If implements clientv3.Txn.
func (t *boundedTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

// Then implements clientv3.Txn.
func (t *boundedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thenOps = append(t.thenOps, ops...)
	return t
}

// Else implements clientv3.Txn.
func (t *boundedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elseOps = append(t.elseOps, ops...)
	return t
}

// Commit implements clientv3.Txn: it sends the transaction, bounded.
func (t *boundedTxn) Commit() (resp *clientv3.TxnResponse, err error) {
	err = t.b.call(t.ctx, t.b.timeout, t.writes(), func(ctx context.Context) (err error) {
		resp, err = t.b.kv.Txn(ctx).If(t.cmps...).Then(t.thenOps...).Else(t.elseOps...).Commit()
		return err
	})
	return resp, err
}

// writes: the transaction may change etcd's state (it has a put or a
// delete in either branch).
func (t *boundedTxn) writes() bool {
	for _, ops := range [][]clientv3.Op{t.thenOps, t.elseOps} {
		for _, op := range ops {
			if op.IsPut() || op.IsDelete() || op.IsTxn() {
				return true
			}
		}
	}
	return false
}

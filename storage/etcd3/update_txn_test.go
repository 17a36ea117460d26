package etcd3

import (
	"context"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// txnLog records the transactions a client sends to etcd, as sent.
type txnLog struct {
	mu   sync.Mutex
	txns []*pb.TxnRequest
}

func (l *txnLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r, ok := req.(*pb.TxnRequest); ok {
		l.mu.Lock()
		l.txns = append(l.txns, r)
		l.mu.Unlock()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// last returns the last transaction sent.
func (l *txnLog) last(t *testing.T) *pb.TxnRequest {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.txns) == 0 {
		t.Fatal("no transaction was sent")
	}
	return l.txns[len(l.txns)-1]
}

// loggedTxnStore is newTestStore on a client of its own whose
// transactions are recorded.
func loggedTxnStore(t *testing.T) (*Store, *txnLog) {
	t.Helper()
	log := &txnLog{}
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcdServer.Endpoints, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), DialOptions: []grpc.DialOption{grpc.WithUnaryInterceptor(log.intercept)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return newTestStore(t, func(c *Config) { c.Client = cli }), log
}

// targets lists what a transaction's compares compare.
func targets(r *pb.TxnRequest) []pb.Compare_CompareTarget {
	var out []pb.Compare_CompareTarget
	for _, c := range r.Compare {
		out = append(out, c.Target)
	}
	return out
}

// put returns the put of a transaction's success branch.
func put(t *testing.T, r *pb.TxnRequest) *pb.PutRequest {
	t.Helper()
	if len(r.Success) != 1 || r.Success[0].GetRequestPut() == nil {
		t.Fatalf("transaction's success branch is %v, want one put", r.Success)
	}
	return r.Success[0].GetRequestPut()
}

func bump(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
	in.(*widget.Widget).Spec.Replicas++
	return in, nil, nil
}

// An update of a state read from etcd compares the mod revision only (it
// pins the lease) and writes a key without a lease with a plain put: no
// lease compare and no IgnoreLease, each of which costs etcd a read of the
// key while applying the write. A key with a lease keeps it.
func TestUpdateTxnOfReadState(t *testing.T) {
	s, log := loggedTxnStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/plain", testWidget("plain", nil))
	if err := s.Create(ctx, "/widgets/ns/leased", testWidget("leased", nil), &widget.Widget{}, 600); err != nil {
		t.Fatal(err)
	}
	lease := rawGet(t, s, "/widgets/ns/leased").Kvs[0].Lease

	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/plain", &widget.Widget{}, false, nil, bump, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	txn := log.last(t)
	if got := targets(txn); len(got) != 1 || got[0] != pb.Compare_MOD {
		t.Errorf("write of a read state compares %v, want [MOD]", got)
	}
	if p := put(t, txn); p.IgnoreLease || p.Lease != 0 {
		t.Errorf("write of a key without a lease: IgnoreLease %v, lease %x; want a plain put", p.IgnoreLease, p.Lease)
	}

	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/leased", &widget.Widget{}, false, nil, bump, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	txn = log.last(t)
	if got := targets(txn); len(got) != 1 || got[0] != pb.Compare_MOD {
		t.Errorf("write of a read state compares %v, want [MOD]", got)
	}
	if p := put(t, txn); !p.IgnoreLease {
		t.Error("write of a leased key with a nil TTL does not keep the lease")
	}
	if now := rawGet(t, s, "/widgets/ns/leased").Kvs[0].Lease; now != lease {
		t.Errorf("the key's lease went from %x to %x", lease, now)
	}
}

// An update from a suggestion (lease not known, tryUpdate told TTL 0)
// requires the key to have no lease and writes it with a plain put.
func TestUpdateTxnOfSuggestion(t *testing.T) {
	s, log := loggedTxnStore(t)
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, bump, cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	txn := log.last(t)
	if got := targets(txn); len(got) != 2 || got[0] != pb.Compare_MOD || got[1] != pb.Compare_LEASE {
		t.Errorf("write of a suggestion compares %v, want [MOD LEASE]", got)
	}
	if p := put(t, txn); p.IgnoreLease || p.Lease != 0 {
		t.Errorf("write of a suggestion: IgnoreLease %v, lease %x; want a plain put", p.IgnoreLease, p.Lease)
	}
	if out.Spec.Replicas != 1 {
		t.Errorf("replicas %d, want 1", out.Spec.Replicas)
	}
}

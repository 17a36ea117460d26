package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

// Workload constants (WORKLOAD.md).
const (
	// Namespace holds every benchmark object.
	Namespace = "bench"
	// DefaultN is the number of objects unless LISTWATCH_BENCH_N says otherwise.
	DefaultN = 10000
	// ObjectSize is the target encoded size of an object, in bytes.
	ObjectSize = 1024
	// StampAnnotation carries the write time (Unix nanoseconds) of an update,
	// for write→delivery latency.
	StampAnnotation = "bench.listwatch.dev/written-at"
	// padAnnotation pads objects to ObjectSize.
	padAnnotation = "bench.listwatch.dev/pad"
)

// N returns the number of objects: LISTWATCH_BENCH_N when set to a positive
// integer, else DefaultN.
func N() (int, error) {
	v := os.Getenv("LISTWATCH_BENCH_N")
	if v == "" {
		return DefaultN, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("LISTWATCH_BENCH_N=%q: want a positive integer", v)
	}
	return n, nil
}

// Name is the name of object i.
func Name(i int) string { return fmt.Sprintf("obj-%05d", i) }

// Object returns object i of the workload, padded to about ObjectSize bytes
// when encoded with widget.Codec.
func Object(i int) *widget.Widget {
	w := widget.NewWidget(Namespace, Name(i)).WithLabels(map[string]string{
		"app":  fmt.Sprintf("app-%d", i%10),
		"tier": fmt.Sprintf("tier-%d", (i/10)%10),
	})

	w.Spec.NodeName = fmt.Sprintf("node-%d", i%100)
	w.Annotations = map[string]string{padAnnotation: ""}
	data, err := runtime.Encode(widget.Codec, w)
	if err == nil && len(data) < ObjectSize {
		w.Annotations[padAnnotation] = strings.Repeat("x", ObjectSize-len(data))
	}
	return w
}

// Stamp records t as the write time of obj.
func Stamp(obj runtime.Object, t time.Time) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	a := acc.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[StampAnnotation] = strconv.FormatInt(t.UnixNano(), 10)
	acc.SetAnnotations(a)
	return nil
}

// Stamped returns the write time Stamp recorded on obj.
func Stamped(obj runtime.Object) (time.Time, bool) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(acc.GetAnnotations()[StampAnnotation], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// Loader writes workload objects straight to etcd, encoded as the store
// encodes them, so that loading N objects takes a few round trips.
type Loader struct {
	// Client is the raw etcd client.
	Client *clientv3.Client
	// Codec encodes the objects (widget.Codec for the etcd3 store).
	Codec runtime.Codec
	// Key returns the etcd key of object i.
	Key func(i int) string
}

// maxTxnOps stays below etcd's default limit of 128 operations per transaction.
const maxTxnOps = 100

// Load writes objects [0, n) and returns the mean encoded size and the
// revision of the last write.
func (l Loader) Load(ctx context.Context, n int) (meanSize float64, rev int64, err error) {
	total := 0
	for start := 0; start < n; start += maxTxnOps {
		ops := make([]clientv3.Op, 0, maxTxnOps)
		for i := start; i < min(n, start+maxTxnOps); i++ {
			data, err := runtime.Encode(l.Codec, Object(i))
			if err != nil {
				return 0, 0, err
			}
			total += len(data)
			ops = append(ops, clientv3.OpPut(l.Key(i), string(data)))
		}
		resp, err := l.Client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return 0, 0, fmt.Errorf("loading objects from %d: %w", start, err)
		}
		rev = resp.Header.Revision
	}
	return float64(total) / float64(n), rev, nil
}

// Update writes a new version of object i stamped with the current time
// (raw Put, the same for every source) and returns its revision.
func (l Loader) Update(ctx context.Context, i, gen int) (int64, error) {
	obj := Object(i)
	obj.Spec.Replicas = int64(gen)
	if err := Stamp(obj, time.Now()); err != nil {
		return 0, err
	}
	data, err := runtime.Encode(l.Codec, obj)
	if err != nil {
		return 0, err
	}
	resp, err := l.Client.Put(ctx, l.Key(i), string(data))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

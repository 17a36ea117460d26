package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// requestDeadline is every client request's deadline; an answer later
// than requestDeadline+deadlineSlack is a violation.
const (
	requestDeadline = 5 * time.Second
	deadlineSlack   = time.Second
)

// groups are the values of the "grp" label writes pick from.
var groups = []string{"g0", "g1", "g2"}

// listSelectors are the label selectors lists and watches pick from.
var listSelectors = []string{"", "", "", "grp=g1", "grp!=g0", "grp in (g0,g2)"}

// keyspace is the objects the traffic writes: keys namespaces × names.
type keyspace struct{ keys []string } // namespace/name

func newKeyspace(n int) keyspace {
	var ks keyspace
	for i := range n {
		ks.keys = append(ks.keys, fmt.Sprintf("ns-%c/k%d", 'a'+i%2, i))
	}
	return ks
}

func splitKey(k string) (ns, name string) {
	ns, name, _ = strings.Cut(k, "/")
	return ns, name
}

// client is one traffic generator: it sends one request at a time to a
// replica (its own when it runs, another otherwise) and records each.
type client struct {
	id   int
	rng  *rand.Rand
	run  *run
	seqN int
	// lastRV is the RV this client last saw of each key, for preconditions.
	lastRV map[string]uint64
}

func (c *client) loop(ctx context.Context) {
	for ctx.Err() == nil {
		rep, s := c.run.pickReplica(c.rng, c.id)
		if s == nil {
			sleepCtx(ctx, 20*time.Millisecond)
			continue
		}
		c.step(ctx, rep, s)
	}
}

func (c *client) nextSeq() string {
	c.seqN++
	return fmt.Sprintf("c%d-%d", c.id, c.seqN)
}

// step sends one random request.
func (c *client) step(ctx context.Context, rep int, s storage.Interface) {
	key := c.run.keys.keys[c.rng.IntN(len(c.run.keys.keys))]
	o := &op{ID: int(c.run.rec.ids.Add(1)), Client: c.id, Replica: rep}
	rctx, cancel := context.WithTimeout(ctx, requestDeadline)
	defer cancel()
	switch p := c.rng.IntN(100); {
	case p < 12:
		c.create(rctx, s, o, key)
	case p < 24:
		c.update(rctx, s, o, key, false)
	case p < 34:
		c.update(rctx, s, o, key, true)
	case p < 38:
		c.delete(rctx, s, o, key, false)
	case p < 42:
		c.delete(rctx, s, o, key, true)
	case p < 62:
		c.get(rctx, s, o, key)
	default:
		c.list(rctx, s, o)
	}
	if ctx.Err() != nil && o.failed() {
		if !o.Kind.write() {
			return // the run ended under the read: not an answer
		}
		o.Aborted = true // a write the run's end cut may still have taken effect
	}
	c.run.rec.add(o)
	if o.failed() && !o.is(storage.CodeNotFound) && !o.is(storage.CodeKeyExists) && !o.is(storage.CodeConflict) {
		sleepCtx(ctx, time.Duration(20+c.rng.IntN(80))*time.Millisecond) // back off, as a client does
	}
}

func (c *client) newWidget(key, seq string) *widget.Widget {
	ns, name := splitKey(key)
	w := widget.NewWidget(ns, name)
	w.Labels = map[string]string{"grp": groups[c.rng.IntN(len(groups))]}
	w.Annotations = map[string]string{storagetest.SeqAnnotation: seq}
	w.Spec.Color = seq
	return w
}

func (c *client) begin(o *op) { o.Call = c.run.rec.since() }
func (c *client) end(o *op)   { o.Return = c.run.rec.since() }

func (c *client) create(ctx context.Context, s storage.Interface, o *op, key string) {
	o.Kind, o.Key, o.Seq = opCreate, key, c.nextSeq()
	obj := c.newWidget(key, o.Seq)
	out := &widget.Widget{}
	c.begin(o)
	err := s.Create(ctx, widget.Key(splitKey(key)), obj, out, 0)
	c.end(o)
	if err != nil {
		o.setErr(err)
		return
	}
	o.RV = rvOf(out)
	c.lastRV[key] = o.RV
}

func (c *client) update(ctx context.Context, s storage.Interface, o *op, key string, cas bool) {
	o.Kind, o.Key, o.Seq = opUpdate, key, c.nextSeq()
	var pre *storage.Preconditions
	if cas {
		o.Kind = opCASUpdate
		o.Precondition = c.precondition(key)
		rv := strconv.FormatUint(o.Precondition, 10)
		pre = &storage.Preconditions{ResourceVersion: &rv}
	}
	grp := groups[c.rng.IntN(len(groups))]
	seq := o.Seq
	try := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget).DeepCopy()
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations[storagetest.SeqAnnotation] = seq
		w.Spec.Color = seq
		if w.Labels == nil {
			w.Labels = map[string]string{}
		}
		w.Labels["grp"] = grp
		return w, nil, nil
	}
	out := &widget.Widget{}
	c.begin(o)
	err := s.GuaranteedUpdate(ctx, widget.Key(splitKey(key)), out, false, pre, try, nil, storage.UpdateOptions{})
	c.end(o)
	if err != nil {
		o.setErr(err)
		return
	}
	o.RV = rvOf(out)
	c.lastRV[key] = o.RV
}

// precondition is the RV the client last saw of key, or now and then one
// it never saw (a stale precondition must fail).
func (c *client) precondition(key string) uint64 {
	if rv, ok := c.lastRV[key]; ok && c.rng.IntN(4) != 0 {
		return rv
	}
	return max(c.run.startRev, back(c.run.rec.maxRV.Load(), c.rng.IntN(5)))
}

func (c *client) delete(ctx context.Context, s storage.Interface, o *op, key string, cas bool) {
	o.Kind, o.Key = opDelete, key
	var pre *storage.Preconditions
	if cas {
		o.Kind = opCASDelete
		o.Precondition = c.precondition(key)
		rv := strconv.FormatUint(o.Precondition, 10)
		pre = &storage.Preconditions{ResourceVersion: &rv}
	}
	out := &widget.Widget{}
	c.begin(o)
	err := s.Delete(ctx, widget.Key(splitKey(key)), out, pre, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
	c.end(o)
	if err != nil {
		o.setErr(err)
		return
	}
	o.Found, o.GotSeq, o.RV = true, out.Annotations[storagetest.SeqAnnotation], 0
	delete(c.lastRV, key)
}

// readRV picks a read's resource version: unset, "0", or an RV at most a
// few revisions behind the newest one acknowledged.
func (c *client) readRV(o *op, exact bool) storage.RV {
	switch p := c.rng.IntN(10); {
	case p < 4:
		o.Mode = rvConsistent
		return storage.RV{}
	case p < 6:
		o.Mode = rvAny
		return storage.RVAny
	default:
		o.Mode = rvNotOlderThan
		if exact && p >= 8 {
			o.Mode = rvExact
		}
		top := c.run.rec.maxRV.Load()
		o.ReqRV = max(c.run.startRev, back(top, c.rng.IntN(20)))
		return storage.RVAt(o.ReqRV)
	}
}

func (c *client) get(ctx context.Context, s storage.Interface, o *op, key string) {
	o.Kind, o.Key = opGet, key
	rv := c.readRV(o, false)
	out := &widget.Widget{}
	c.begin(o)
	err := s.Get(ctx, widget.Key(splitKey(key)), storage.GetOptions{ResourceVersion: rv, IgnoreNotFound: true}, out)
	c.end(o)
	if err != nil {
		o.setErr(err)
		return
	}
	if out.Name != "" {
		o.Found, o.GotSeq, o.RV = true, out.Annotations[storagetest.SeqAnnotation], rvOf(out)
		c.lastRV[key] = o.RV
	}
}

func (c *client) list(ctx context.Context, s storage.Interface, o *op) {
	o.Kind = opList
	rv := c.readRV(o, true)
	o.Label = listSelectors[c.rng.IntN(len(listSelectors))]
	if c.rng.IntN(3) == 0 {
		o.Limit = int64(1 + c.rng.IntN(4))
	}
	sel, err := labels.Parse(o.Label)
	if err != nil {
		panic(err)
	}
	opts := storage.ListOptions{ResourceVersion: rv, Recursive: true,
		Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: widget.GetAttrs, Limit: o.Limit}}
	if o.Mode == rvNotOlderThan {
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	}
	if o.Mode == rvExact {
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	}
	c.begin(o)
	defer c.end(o)
	for {
		l := &widget.WidgetList{}
		if err := s.GetList(ctx, widget.KeyRoot, opts, l); err != nil {
			o.setErr(err)
			return
		}
		o.Pages++
		lrv, err := strconv.ParseUint(l.ResourceVersion, 10, 64)
		if err != nil {
			o.setErr(fmt.Errorf("list RV %q: %w", l.ResourceVersion, err))
			return
		}
		if o.Pages == 1 {
			o.RV, o.FirstReturn = lrv, c.run.rec.since()
		} else if lrv != o.RV {
			o.setErr(fmt.Errorf("page %d at RV %d, the first at %d", o.Pages, lrv, o.RV))
			return
		}
		for i := range l.Items {
			w := &l.Items[i]
			o.Items = append(o.Items, item{Key: w.Namespace + "/" + w.Name,
				Seq: w.Annotations[storagetest.SeqAnnotation], RV: rvOf(w)})
		}
		if l.Continue == "" {
			return
		}
		// The next pages: the continue token carries the RV.
		opts.Predicate.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = l.Continue, storage.RV{}, ""
	}
}

func rvOf(w *widget.Widget) uint64 {
	rv, _ := strconv.ParseUint(w.ResourceVersion, 10, 64)
	return rv
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// startClients runs n clients until ctx is done.
func (r *run) startClients(ctx context.Context, wg *sync.WaitGroup, n int) {
	for i := range n {
		c := &client{id: i, rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(100+i))), run: r, lastRV: map[string]uint64{}}
		wg.Go(func() { c.loop(ctx) })
	}
}

// back is rv - n, or 0.
func back(rv uint64, n int) uint64 {
	if rv <= uint64(n) {
		return 0
	}
	return rv - uint64(n)
}

package storagetest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var badInputCases = []Case{
	{"MalformedResourceVersionRefusedWhereParsed", testMalformedRVRefused},
	{"GetResourceVersionBeyondAnyRevision", testGetRVBeyond},
	{"ListResourceVersionBeyondAnyRevision", testListRVBeyond},
	{"ListInvalidResourceVersionMatch", testListInvalidMatch},
	{"WatchResourceVersionBeyondAnyRevision", testWatchRVBeyond},
	{"CreateInvalidKey", testCreateInvalidKey},
	{"GetInvalidKey", testGetInvalidKey},
	{"ListInvalidKey", testListInvalidKey},
	{"UpdateInvalidKey", testUpdateInvalidKey},
	{"DeleteInvalidKey", testDeleteInvalidKey},
	{"WatchInvalidKey", testWatchInvalidKey},
	{"RandomMalformedInputRejected", testRandomMalformedInput},
}

var malformedRVs = []string{"abc", "-1", "1.5", " 7", "0x10", "99999999999999999999999"}

func expectInvalid(t *testing.T, op string, err error) {
	t.Helper()
	expectCode(t, op, err, storage.ErrInvalidArgument)
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("%s: apierrors.IsBadRequest(%v) is false", op, err)
	}
}

// testMalformedRVRefused: a malformed RV string never reaches a store:
// ParseRV, where requests enter, refuses it as bad input.
func testMalformedRVRefused(t *testing.T, e *Env) {
	for _, rv := range malformedRVs {
		_, err := storage.ParseRV(rv)
		expectInvalid(t, "ParseRV "+rv, err)
	}
}

// beyondRVs are RVs above any revision etcd can have (they parse: a
// uint64, as Kubernetes parses them).
var beyondRVs = []storage.RV{storage.RVAt(1 << 63), storage.RVAt(math.MaxUint64)}

// expectTooLargeNow checks the answer to a read at an RV beyond any
// revision: too large resource version (504 with the ResourceVersionTooLarge
// cause) naming a current revision at least cur, answered at once rather
// than after a wait for the RV (the error does not wrap a context's).
func expectTooLargeNow(t *testing.T, op string, err error, cur int64) {
	t.Helper()
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("%s: %v, want an apierrors Timeout with cause ResourceVersionTooLarge", op, err)
	}
	var se *storage.Error
	if !errors.As(err, &se) {
		return // a watch's ERROR event: its Status says no more
	}
	if se.Code != storage.CodeTooLargeResourceVersion || se.Oldest < cur || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: %v (code %v, current %d), want too large naming the current revision (at least %d) without a wait",
			op, err, se.Code, se.Oldest, cur)
	}
}

func testGetRVBeyond(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	cur := e.etcdRev(t)
	for _, rv := range beyondRVs {
		err := e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{ResourceVersion: rv}, e.empty())
		expectTooLargeNow(t, "Get RV "+rv.String(), err, cur)
	}
}

func testListRVBeyond(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	cur := e.etcdRev(t)
	for _, rv := range beyondRVs {
		for _, match := range []metav1.ResourceVersionMatch{"", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact} {
			opts := everything
			opts.ResourceVersion, opts.ResourceVersionMatch = rv, match
			err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
			expectTooLargeNow(t, "GetList RV "+rv.String()+" match "+string(match), err, cur)
		}
	}
}

func testListInvalidMatch(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := everything
	opts.ResourceVersion = rvAt(e.etcdRev(t))
	opts.ResourceVersionMatch = "Sometimes"
	expectInvalid(t, "GetList with ResourceVersionMatch Sometimes", e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList()))
}

// watchErr starts a watch that must be refused as bad input: either Watch
// returns the error, or the watch delivers one ERROR event and closes.
func watchErr(t *testing.T, e *Env, key string, opts storage.ListOptions) error {
	t.Helper()
	w, err := e.Store.Watch(ctx(t), key, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	evs := drainUntilClosed(t, w)
	if len(evs) != 1 || evs[0].Type != watch.Error {
		t.Fatalf("watch with bad input delivered %d events (first %v) instead of one ERROR", len(evs), eventTypes(evs))
	}
	st, ok := evs[0].Object.(*metav1.Status)
	if !ok {
		t.Fatalf("ERROR event carries %T, want *metav1.Status", evs[0].Object)
	}
	return &apierrors.StatusError{ErrStatus: *st}
}

func eventTypes(evs []watch.Event) []watch.EventType {
	var out []watch.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func testWatchRVBeyond(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	cur := e.etcdRev(t)
	for _, rv := range beyondRVs {
		err := watchErr(t, e, e.ResourcePrefix, storage.ListOptions{ResourceVersion: rv, Recursive: true, Predicate: storage.Everything})
		expectTooLargeNow(t, "Watch RV "+rv.String(), err, cur)
	}
}

// badKeys are keys no operation may accept for a store on ResourcePrefix.
func (e *Env) badKeys() []string {
	return []string{
		"",
		"/gadgets/ns/a",
		e.ResourcePrefix + "x/ns/a",
		e.ResourcePrefix + "/ns/../../gadgets/a",
		e.ResourcePrefix + "/./ns/a",
	}
}

// expectNothingWritten fails when the store's etcd prefix holds keys.
func (e *Env) expectNothingWritten(t *testing.T) {
	t.Helper()
	if n := e.rawKeys(t); n != 0 {
		t.Fatalf("rejected request wrote %d keys", n)
	}
}

func testCreateInvalidKey(t *testing.T, e *Env) {
	for _, key := range e.badKeys() {
		err := e.Store.Create(ctx(t), key, e.newObj("ns", "a", nil), e.empty(), 0)
		expectInvalid(t, "Create "+key, err)
	}
	e.expectNothingWritten(t)
	if n := e.rawCountBelow(t, "/gadgets"); n != 0 {
		t.Fatalf("rejected create wrote %d keys under /gadgets", n)
	}
}

func testGetInvalidKey(t *testing.T, e *Env) {
	for _, key := range e.badKeys() {
		expectInvalid(t, "Get "+key, e.Store.Get(ctx(t), key, storage.GetOptions{}, e.empty()))
	}
}

func testListInvalidKey(t *testing.T, e *Env) {
	for _, key := range e.badKeys() {
		expectInvalid(t, "GetList "+key, e.Store.GetList(ctx(t), key, everything, e.emptyList()))
	}
}

func testUpdateInvalidKey(t *testing.T, e *Env) {
	for _, key := range e.badKeys() {
		err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), true, nil,
			func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) {
				return e.newObj("ns", "a", nil), nil, nil
			}, nil, storage.UpdateOptions{})
		expectInvalid(t, "GuaranteedUpdate "+key, err)
	}
	e.expectNothingWritten(t)
}

func testDeleteInvalidKey(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	for _, key := range e.badKeys() {
		_, err := e.deleteWith(t, key, nil, nil, nil)
		expectInvalid(t, "Delete "+key, err)
	}
	e.mustGet(t, e.key("ns", "a"))
}

func testWatchInvalidKey(t *testing.T, e *Env) {
	for _, key := range e.badKeys() {
		err := watchErr(t, e, key, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("Watch %q: got %v, want a bad-request error", key, err)
		}
	}
}

// testRandomMalformedInput feeds seeded random resource versions and
// continue tokens to Get and GetList: each must be refused as bad input
// (never a panic, never an unrelated error).
func testRandomMalformedInput(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789-+. xe/%\x00abcZ"
	for i := range 150 {
		b := make([]byte, 1+rng.IntN(24))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		rv := string(b)
		if _, err := strconv.ParseUint(rv, 10, 63); err == nil {
			continue // a well-formed RV by chance
		}
		_, err := storage.ParseRV(rv)
		expectInvalid(t, fmt.Sprintf("ParseRV %q", rv), err)

		raw := make([]byte, rng.IntN(64))
		for j := range raw {
			raw[j] = byte(rng.IntN(256))
		}
		tokens := []string{base64.RawURLEncoding.EncodeToString(raw), string(raw), rv}
		opts := everything
		opts.Predicate.Limit = 1
		opts.Predicate.Continue = tokens[i%len(tokens)]
		if opts.Predicate.Continue == "" {
			continue
		}
		err = e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
		expectInvalid(t, fmt.Sprintf("GetList continue %q", opts.Predicate.Continue), err)
	}
}

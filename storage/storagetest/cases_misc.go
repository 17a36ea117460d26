package storagetest

import (
	"fmt"
	"testing"

	"github.com/listwatch/listwatch/storage"
)

var miscCases = []Case{
	{"StatsCountsObjects", testStats},
	{"CurrentResourceVersionMonotonic", testCurrentRVMonotonic},
	{"CurrentResourceVersionIsGlobal", testCurrentRVGlobal},
	{"ReadinessCheck", testReadiness},
	{"VersionerMatchesStoredRevision", testVersioner},
}

func testStats(t *testing.T, e *Env) {
	waitCount := func(want int64) {
		t.Helper()
		eventually(t, fmt.Sprintf("Stats to report %d objects", want), func() (bool, string) {
			st, err := e.Store.Stats(ctx(t))
			if err != nil {
				t.Fatalf("Stats: %v", err)
			}
			return st.ObjectCount == want, fmt.Sprintf("reports %d", st.ObjectCount)
		})
	}
	waitCount(0)
	createN(t, e, "ns1", 2, nil)
	e.mustCreate(t, "ns2", "x", nil)
	waitCount(3)
	e.mustDelete(t, e.key("ns1", "o00"))
	waitCount(2)
}

func testCurrentRVMonotonic(t *testing.T, e *Env) {
	before, err := e.Store.GetCurrentResourceVersion(ctx(t))
	if err != nil {
		t.Fatalf("GetCurrentResourceVersion: %v", err)
	}
	created := e.mustCreate(t, "ns", "a", nil)
	after, err := e.Store.GetCurrentResourceVersion(ctx(t))
	if err != nil {
		t.Fatalf("GetCurrentResourceVersion: %v", err)
	}
	rv := uint64(rvOf(t, created))
	if before == 0 || before >= rv || after < rv {
		t.Fatalf("current RV before a write %d, write at %d, current RV after %d: want before < write <= after", before, rv, after)
	}
}

func testCurrentRVGlobal(t *testing.T, e *Env) {
	rev := e.bumpUnrelated(t)
	got, err := e.Store.GetCurrentResourceVersion(ctx(t))
	if err != nil {
		t.Fatalf("GetCurrentResourceVersion: %v", err)
	}
	if int64(got) < rev {
		t.Fatalf("current RV %d is older than etcd revision %d written before the call", got, rev)
	}
}

func testReadiness(t *testing.T, e *Env) {
	eventually(t, "the store to be ready", func() (bool, string) {
		err := e.Store.ReadinessCheck()
		if err != nil && !storage.IsCode(err, storage.CodeNotReady) {
			t.Fatalf("ReadinessCheck: %v, want nil or ErrNotReady", err)
		}
		return err == nil, fmt.Sprint(err)
	})
	e.mustCreate(t, "ns", "a", nil)
	if err := e.Store.ReadinessCheck(); err != nil {
		t.Fatalf("ReadinessCheck after serving a write: %v", err)
	}
}

func testVersioner(t *testing.T, e *Env) {
	v := e.Store.Versioner()
	if v == nil {
		t.Fatal("Versioner() is nil")
	}
	created := e.mustCreate(t, "ns", "a", nil)
	got, err := v.ObjectResourceVersion(created)
	if err != nil || int64(got) != e.rawModRevision(t, e.key("ns", "a")) {
		t.Fatalf("Versioner reads RV %d (%v), want the etcd mod revision %d", got, err, e.rawModRevision(t, e.key("ns", "a")))
	}
	_, err = v.ParseResourceVersion("twelve")
	expectCode(t, "ParseResourceVersion of a malformed RV", err, storage.ErrInvalidArgument)
}

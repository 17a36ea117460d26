package etcd3

import (
	"strconv"
	"testing"

	"github.com/listwatch/listwatch/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func itoa[T ~int64 | ~uint64 | ~int](v T) string { return strconv.FormatInt(int64(v), 10) }

func statusMessage(ev watch.Event) string {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return st.Message
	}
	return ""
}

// rvAt is the RV naming revision v.
func rvAt[T ~int64 | ~uint64 | ~int](v T) storage.RV { return storage.RVAt(uint64(v)) }

// mustRV parses the wire RV s.
func mustRV(t testing.TB, s string) storage.RV {
	t.Helper()
	rv, err := storage.ParseRV(s)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

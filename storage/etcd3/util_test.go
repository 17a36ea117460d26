package etcd3

import (
	"strconv"

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

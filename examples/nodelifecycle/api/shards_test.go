package api

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/listwatch/listwatch/storage"
)

// TestUIDShards: for several n, the n selectors parse, every pod (random
// UUIDs, as the server assigns) falls in exactly one of them, and none is
// less than half its fair share.
func TestUIDShards(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7} {
		sels := UIDShards(n)
		require.Len(t, sels, max(n, 1))
		counts := make([]int, len(sels))
		for range 2000 {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: uuid.NewUUID()}}
			in := -1
			for i, expr := range sels {
				sel, err := storage.ParseShardSelector(expr)
				require.NoError(t, err, expr)
				ok, err := sel.Matches(pod)
				require.NoError(t, err)
				if ok {
					require.Equal(t, -1, in, "uid %s in shards %d and %d of %d", pod.UID, in, i, n)
					in = i
				}
			}
			require.NotEqual(t, -1, in, "uid %s in no shard of %d", pod.UID, n)
			counts[in]++
		}
		for i, c := range counts {
			require.Greater(t, c, 2000/len(sels)/2, "shard %d of %d holds %d of 2000: ranges are not even", i, n, c)
		}
	}
}

package server

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"

	"github.com/stretchr/testify/require"
)

// TestShardSelectorOverHTTP: the shardSelector query parameter of
// Kubernetes' sharded list and watch (KEP-5866). A list returns the objects
// whose FNV-1a hash of metadata.uid is in the range, echoes the selector in
// metadata.shardInfo, and the two halves partition the collection; a
// malformed selector is 400 with the parser's reason.
func TestShardSelectorOverHTTP(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.create("default", fmt.Sprintf("w%02d", i), nil, "")
	}
	lowSel := "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	highSel := "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
	seen := map[string]bool{}
	for _, sel := range []string{lowSel, highSel} {
		r := f.do(http.MethodGet, apiBase+"/widgets?shardSelector="+url.QueryEscape(sel), "", nil)
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		list := r.list(t)
		info, _, _ := unstructured.NestedString(list.Object, "metadata", "shardInfo", "selector")
		require.Equal(t, sel, info)
		for _, it := range list.Items {
			low := sharding.HexLess("0x"+sharding.HashField(string(it.GetUID())), "0x8000000000000000")
			require.Equal(t, sel == lowSel, low, "%s (uid %s) listed in the wrong shard", it.GetName(), it.GetUID())
			require.False(t, seen[it.GetName()], "%s in both shards", it.GetName())
			seen[it.GetName()] = true
		}
	}
	require.Len(t, seen, 30)

	r := f.do(http.MethodGet, apiBase+"/widgets?shardSelector="+url.QueryEscape("shardRange(object.metadata.uid, '0x0', '0x8')"), "", nil)
	st := r.status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	require.Contains(t, st.Message, "16-digit")
}

package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The finalizers by which kube-apiserver hands a deletion's propagation
// to the garbage collector.
const (
	// FinalizerForeground keeps an owner until the collector deleted its
	// blocking dependents.
	FinalizerForeground = metav1.FinalizerDeleteDependents
	// FinalizerOrphan keeps an owner until the collector removed it from
	// its dependents' ownerReferences.
	FinalizerOrphan = metav1.FinalizerOrphanDependents
)

// propagationRetries bounds the read-write rounds of adding a finalizer.
const propagationRetries = 8

// DeletionPropagation serves DELETE of an object with propagationPolicy
// Foreground or Orphan (or orphanDependents: true) as kube-apiserver does:
// it first adds the foregroundDeletion or orphan finalizer, so that the
// delete only marks the object and a garbage collector finishes it. The
// library's server validates propagationPolicy but has no garbage
// collector, and ignores it. Background (kubectl's default) and no policy
// delete at once and need nothing here: the collector deletes dependents
// whose owners are gone.
func DeletionPropagation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodDelete {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, maxFrontBody+1))
		if err != nil || len(body) > maxFrontBody {
			writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "request body too large or unreadable")
			return
		}
		finalizer := propagationFinalizer(req, body)
		if finalizer != "" && isObjectPath(req.URL.Path) {
			if rec := addFinalizer(next, req, finalizer); rec != nil {
				copyAnswer(w, rec)
				return
			}
		}
		copyAnswer(w, innerRequest(next, req, http.MethodDelete, req.URL.Path, "application/json", bodyOrNil(body)))
	})
}

// bodyOrNil is nil for an empty body.
func bodyOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// isObjectPath reports whether path names one object (…/{plural}/{name}),
// not a collection.
func isObjectPath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// /api/v1/{plural}/{name}, /api/v1/namespaces/{ns}/{plural}/{name},
	// /apis/{g}/{v}/{plural}/{name}, /apis/{g}/{v}/namespaces/{ns}/{plural}/{name}
	n := len(parts)
	if n > 0 && parts[0] == "apis" {
		n--
	}
	return n == 4 || (n == 6 && slices.Contains(parts, "namespaces"))
}

// propagationFinalizer is the finalizer a delete's options ask for ("" for
// Background or none).
func propagationFinalizer(req *http.Request, body []byte) string {
	var opts metav1.DeleteOptions
	if len(body) > 0 {
		if json.Unmarshal(body, &opts) != nil {
			return "" // the server answers the malformed body
		}
	} else {
		q := req.URL.Query()
		if p := q.Get("propagationPolicy"); p != "" {
			pp := metav1.DeletionPropagation(p)
			opts.PropagationPolicy = &pp
		}
		if q.Get("orphanDependents") == "true" {
			yes := true
			opts.OrphanDependents = &yes
		}
	}
	switch {
	case opts.PropagationPolicy != nil && *opts.PropagationPolicy == metav1.DeletePropagationForeground:
		return FinalizerForeground
	case opts.PropagationPolicy != nil && *opts.PropagationPolicy == metav1.DeletePropagationOrphan,
		opts.PropagationPolicy == nil && opts.OrphanDependents != nil && *opts.OrphanDependents:
		return FinalizerOrphan
	}
	return ""
}

// addFinalizer adds finalizer to req's object unless it has it or is
// already being deleted. It returns the answer to give instead of
// deleting (the object is missing, or the write failed), nil to go on.
func addFinalizer(next http.Handler, req *http.Request, finalizer string) *httptest.ResponseRecorder {
	for range propagationRetries {
		cur := innerRequest(next, req, http.MethodGet, req.URL.Path, "", nil)
		if cur.Code != http.StatusOK {
			return cur
		}
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(cur.Body.Bytes(), &obj); err != nil {
			return nil
		}
		if obj.DeletionTimestamp != nil || slices.Contains(obj.Finalizers, finalizer) {
			return nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": obj.ResourceVersion, "finalizers": append(obj.Finalizers, finalizer)}})
		rec := innerRequest(next, req, http.MethodPatch, req.URL.Path, "application/merge-patch+json", patch)
		switch {
		case rec.Code == http.StatusOK:
			return nil
		case rec.Code == http.StatusConflict && req.Context().Err() == nil:
			continue
		}
		return rec
	}
	return nil
}

package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// strategicTypes are the Go types whose patch strategies (the
// patchStrategy and patchMergeKey struct tags) strategic merge patches of
// each plural follow.
var strategicTypes = map[string]func() any{
	"nodes": func() any { return &corev1.Node{} }, "pods": func() any { return &corev1.Pod{} },
	"leases":      func() any { return &coordinationv1.Lease{} },
	"deployments": func() any { return &appsv1.Deployment{} }, "replicasets": func() any { return &appsv1.ReplicaSet{} },
}

// strategicPatchRetries bounds the read-patch-write rounds of one
// strategic merge patch that lost a race with another write.
const strategicPatchRetries = 8

// StrategicMergePatches serves PATCH with Content-Type
// application/strategic-merge-patch+json (what kubectl set image, edit
// and label send for Kubernetes' own types) on the example's resources:
// the library's server answers it with 415, as Kubernetes does for custom
// resources. It reads the object, applies the patch with the strategies
// of its k8s.io/api type, and sends next the difference as a JSON merge
// patch carrying the read resourceVersion as a precondition, retrying
// when another write came between (unless the patch itself names a
// resourceVersion: then the conflict is the client's). Everything else
// goes to next unchanged.
func StrategicMergePatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		newObj := strategicTarget(req)
		if newObj == nil {
			next.ServeHTTP(w, req)
			return
		}
		patch, err := io.ReadAll(io.LimitReader(req.Body, maxFrontBody+1))
		if err != nil || len(patch) > maxFrontBody {
			writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "request body too large or unreadable")
			return
		}
		var meta struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(patch, &meta)
		for range strategicPatchRetries {
			cur := innerRequest(next, req, http.MethodGet, req.URL.Path, "", nil)
			if cur.Code != http.StatusOK {
				copyAnswer(w, cur)
				return
			}
			merge, err := strategicToMerge(cur.Body.Bytes(), patch, newObj(), meta.Metadata.ResourceVersion == "")
			if err != nil {
				writeStatus(w, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, err.Error())
				return
			}
			rec := innerRequest(next, req, http.MethodPatch, req.URL.Path, "application/merge-patch+json", merge)
			if rec.Code == http.StatusConflict && meta.Metadata.ResourceVersion == "" && req.Context().Err() == nil {
				continue
			}
			copyAnswer(w, rec)
			return
		}
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("the object changed during %d attempts to apply the strategic merge patch", strategicPatchRetries))
	})
}

// strategicTarget returns the Go type of a strategic merge patch's
// object, nil when req is not one the handler serves: PATCH of an object
// or of its /status, of one of strategicTypes' plurals.
func strategicTarget(req *http.Request) func() any {
	if req.Method != http.MethodPatch || mediaType(req) != "application/strategic-merge-patch+json" {
		return nil
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if n := len(parts); n > 0 && parts[n-1] == "status" {
		parts = parts[:n-1]
	}
	if len(parts) < 2 {
		return nil
	}
	return strategicTypes[parts[len(parts)-2]]
}

// strategicToMerge applies the strategic merge patch to cur (JSON) with
// the strategies of dataStruct's type and returns the same change as a
// JSON merge patch; with pin, the merge patch also requires cur's
// resourceVersion.
func strategicToMerge(cur, patch []byte, dataStruct any, pin bool) ([]byte, error) {
	patched, err := strategicpatch.StrategicMergePatch(cur, patch, dataStruct)
	if err != nil {
		return nil, fmt.Errorf("strategic merge patch: %w", err)
	}
	merge, err := jsonpatch.CreateMergePatch(cur, patched)
	if err != nil {
		return nil, fmt.Errorf("strategic merge patch: %w", err)
	}
	if !pin {
		return merge, nil
	}
	var m map[string]any
	if err := json.Unmarshal(merge, &m); err != nil {
		return nil, err
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(cur, &obj); err != nil {
		return nil, err
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = obj.Metadata.ResourceVersion
	m["metadata"] = md
	return json.Marshal(m)
}

package server

import (
	"fmt"
	"math"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// Subresources declares the subresources of a Resource, as a
// CustomResourceDefinition's spec.versions[].subresources does.
type Subresources struct {
	// Status serves {object}/status. The main resource then ignores status
	// in creates and updates (it keeps the stored status), and writes to
	// /status change only status.
	Status bool
	// Scale, when set, serves {object}/scale as an autoscaling/v1 Scale
	// mapped onto the object's fields (what kubectl scale uses).
	Scale *ScaleSubresource
}

// ScaleSubresource maps an object's fields to an autoscaling/v1 Scale.
// Paths are JSON paths of plain fields, such as ".spec.replicas".
type ScaleSubresource struct {
	// SpecReplicasPath is the desired replica count: Scale's
	// spec.replicas. Required.
	SpecReplicasPath string
	// StatusReplicasPath is the observed replica count: Scale's
	// status.replicas (0 when absent). Required.
	StatusReplicasPath string
	// LabelSelectorPath, when set, is a string field with the selector of
	// the replicas, Scale's status.selector.
	LabelSelectorPath string
}

// validate checks the paths.
func (s *ScaleSubresource) validate() error {
	if s == nil {
		return nil
	}
	if s.SpecReplicasPath == "" || s.StatusReplicasPath == "" {
		return fmt.Errorf("scale subresource: specReplicasPath and statusReplicasPath are required")
	}
	for _, p := range []string{s.SpecReplicasPath, s.StatusReplicasPath, s.LabelSelectorPath} {
		if p != "" && (!strings.HasPrefix(p, ".") || len(scalePath(p)) == 0) {
			return fmt.Errorf("scale subresource: path %q must be a JSON path of a field, such as .spec.replicas", p)
		}
	}
	return nil
}

// scalePath splits ".spec.replicas" into its field names.
func scalePath(p string) []string {
	var out []string
	for _, f := range strings.Split(strings.TrimPrefix(p, "."), ".") {
		if f == "" {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// The subresource names.
const (
	subStatus = "status"
	subScale  = "scale"
)

// hasStatus reports whether r declares the status subresource.
func (r *resource) hasStatus() bool { return r.Subresources != nil && r.Subresources.Status }

// hasSubresource reports whether r declares the subresource name.
func (r *resource) hasSubresource(name string) bool {
	switch {
	case r.Subresources == nil:
		return false
	case name == subStatus:
		return r.Subresources.Status
	case name == subScale:
		return r.Subresources.Scale != nil
	}
	return false
}

// serveSubresource answers requests on {object}/status and {object}/scale.
func (s *Server) serveSubresource(w http.ResponseWriter, req *http.Request, t target) {
	switch {
	case req.Method == http.MethodGet && request.IsWatch(req):
		// Subresources have no watch, as in Kubernetes: watch the object.
		s.writeError(w, req, methodNotAllowed("watch", t.res.Plural+"/"+t.subresource))
	case t.subresource == subStatus && req.Method == http.MethodGet:
		s.serveGet(w, req, t)
	case t.subresource == subStatus && req.Method == http.MethodPut:
		s.serveUpdate(w, req, t)
	case t.subresource == subStatus && req.Method == http.MethodPatch:
		s.servePatch(w, req, t)
	case t.subresource == subScale && req.Method == http.MethodGet:
		s.serveScaleGet(w, req, t)
	case t.subresource == subScale && (req.Method == http.MethodPut || req.Method == http.MethodPatch):
		s.serveScaleWrite(w, req, t)
	default:
		w.Header().Set("Allow", "GET, PUT, PATCH")
		s.writeError(w, req, methodNotAllowed(req.Method, t.res.Plural+"/"+t.subresource))
	}
}

// applySubresourcePolicy makes an update of cur into next follow the
// status subresource's rules, as Kubernetes applies them to custom
// resources: through the main resource status cannot change (next keeps
// cur's); through /status only status can (next becomes cur with next's
// status). Without a status subresource nothing changes.
func (r *resource) applySubresourcePolicy(cur, next *unstructured.Unstructured, sub string) {
	if !r.hasStatus() {
		return
	}
	switch sub {
	case "":
		if st, ok := cur.Object["status"]; ok {
			next.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(next.Object, "status")
		}
	case subStatus:
		st, ok := next.Object["status"]
		obj := cur.DeepCopy().Object
		if ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
		next.Object = obj
	}
}

// dropStatusOnCreate removes status from a new object of a resource with
// a status subresource: status is set through /status only.
func (r *resource) dropStatusOnCreate(u *unstructured.Unstructured) {
	if r.hasStatus() {
		delete(u.Object, "status")
	}
}

// scaleOf is the autoscaling/v1 Scale of u.
func (r *resource) scaleOf(u *unstructured.Unstructured) map[string]any {
	sc := r.Subresources.Scale
	spec, _, _ := unstructured.NestedInt64(u.Object, scalePath(sc.SpecReplicasPath)...)
	status, _, _ := unstructured.NestedInt64(u.Object, scalePath(sc.StatusReplicasPath)...)
	md := map[string]any{"name": u.GetName(), "uid": string(u.GetUID()), "resourceVersion": u.GetResourceVersion()}
	if u.GetNamespace() != "" {
		md["namespace"] = u.GetNamespace()
	}
	if ts := u.GetCreationTimestamp(); !ts.IsZero() {
		md["creationTimestamp"] = ts.UTC().Format("2006-01-02T15:04:05Z")
	}
	st := map[string]any{"replicas": status}
	if sc.LabelSelectorPath != "" {
		if sel, ok, _ := unstructured.NestedString(u.Object, scalePath(sc.LabelSelectorPath)...); ok && sel != "" {
			st["selector"] = sel
		}
	}
	return map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": md,
		"spec": map[string]any{"replicas": spec}, "status": st}
}

// serveScaleGet answers GET on {object}/scale.
func (s *Server) serveScaleGet(w http.ResponseWriter, req *http.Request, t target) {
	rv, err := storage.ParseRV(req.URL.Query().Get("resourceVersion"))
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	out := &unstructured.Unstructured{}
	if err := t.res.Storage.Get(req.Context(), t.objectKey(), storage.GetOptions{ResourceVersion: rv}, out); err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	writeJSON(w, http.StatusOK, t.res.scaleOf(out))
}

// serveScaleWrite answers PUT (a Scale) and PATCH (a merge or JSON patch of
// the Scale) on {object}/scale: the Scale's spec.replicas is written to the
// object's spec replicas path. A resourceVersion in the Scale is a
// precondition (409 when stale); negative replicas are 422.
func (s *Server) serveScaleWrite(w http.ResponseWriter, req *http.Request, t target) {
	spec := request.ScalePatchWrite
	if req.Method == http.MethodPut {
		spec = request.ScaleWrite
	}
	wr, err := request.ReadWrite(w, req, spec, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	var toScale func(cur map[string]any) (map[string]any, error)
	if req.Method == http.MethodPut {
		sc, err := wire.DecodeJSONObject(wr.Body)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		toScale = func(map[string]any) (map[string]any, error) { return runtime.DeepCopyJSON(sc), nil }
	} else {
		apply, err := wr.Patcher(s.cfg.MaxRequestBodyBytes)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		toScale = func(cur map[string]any) (map[string]any, error) {
			out, err := apply(cur)
			if err != nil {
				return nil, err
			}
			m, ok := out.(map[string]any)
			if !ok {
				return nil, badRequest("the patched Scale is not a JSON object")
			}
			return m, nil
		}
	}
	gk := k8sschema.GroupKind{Group: "autoscaling", Kind: "Scale"}
	out, _, err := s.storeUpdate(req, t, false, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		sc, err := toScale(t.res.scaleOf(cur))
		if err != nil {
			return nil, err
		}
		scale := &unstructured.Unstructured{Object: sc}
		if err := checkScaleType(sc); err != nil {
			return nil, err
		}
		if n := scale.GetName(); n != "" && n != t.name {
			return nil, badRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, t.name))
		}
		replicas, found, err := unstructured.NestedFieldNoCopy(sc, "spec", "replicas")
		n, isInt := replicas.(int64)
		switch {
		case err != nil || (found && !isInt):
			return nil, apierrors.NewInvalid(gk, t.name, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), replicas, "must be an integer")})
		case n > math.MaxInt32:
			// Scale's replicas is an int32: Kubernetes cannot decode more.
			return nil, badRequest(fmt.Sprintf("Scale in version \"v1\" cannot be handled as a Scale: spec.replicas %d does not fit an int32", n))
		case n < 0:
			return nil, apierrors.NewInvalid(gk, t.name, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), n, "must be greater than or equal to 0")})
		}
		next := cur.DeepCopy()
		if err := unstructured.SetNestedField(next.Object, n, scalePath(t.res.Subresources.Scale.SpecReplicasPath)...); err != nil {
			return nil, apierrors.NewInvalid(gk, t.name, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), n, err.Error())})
		}
		if err := t.res.checkWrite(cur, next, scale.GetResourceVersion(), subScale); err != nil {
			return nil, err
		}
		if errs := t.res.ValidationErrors(next.Object); len(errs) > 0 {
			return nil, apierrors.NewInvalid(k8sschema.GroupKind{Group: t.res.Group, Kind: t.res.Kind}, t.name, errs)
		}
		if err := t.res.ValidateObject(next); err != nil {
			return nil, err
		}
		return t.res.RecordUpdate(cur, next, wr.Manager), nil
	})
	if err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	writeJSON(w, http.StatusOK, t.res.scaleOf(out))
}

// checkScaleType refuses (400) a Scale body whose apiVersion or kind is
// set to anything but autoscaling/v1 Scale, as Kubernetes refuses a body
// of another type.
func checkScaleType(sc map[string]any) error {
	for _, f := range []struct{ key, want string }{{"apiVersion", "autoscaling/v1"}, {"kind", "Scale"}} {
		switch v := sc[f.key].(type) {
		case nil:
		case string:
			if v != "" && v != f.want {
				return badRequest(fmt.Sprintf("the %s in the data (%s) does not match the expected %s (%s)", f.key, v, f.key, f.want))
			}
		default:
			return badRequest(fmt.Sprintf("%s must be a string", f.key))
		}
	}
	return nil
}

// subresourceDiscovery lists the subresources of r as discovery shows
// them: {plural}/status of r's kind, {plural}/scale of autoscaling/v1
// Scale.
func (r *resource) subresourceDiscovery() []metav1.APIResource {
	var out []metav1.APIResource
	if r.hasStatus() {
		out = append(out, metav1.APIResource{Name: r.Plural + "/status", Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	if r.hasSubresource(subScale) {
		out = append(out, metav1.APIResource{Name: r.Plural + "/scale", Namespaced: r.Namespaced,
			Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	return out
}

package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/storage"
)

// serveDeleteCollection answers DELETE on a collection (Kubernetes'
// deletecollection, what kubectl delete --all sends): every object the
// request's labelSelector and fieldSelector match (in the namespace, or
// in all namespaces) is deleted with the request's DeleteOptions, and the
// answer is 200 with the list of the deleted objects' last states (an
// object with finalizers is marked, as a single delete marks it, and
// listed as marked).
// Objects deleted meanwhile by someone else are skipped; the first other
// failure ends the request with its error. dryRun deletes nothing and
// lists what would go. ignoreStoreReadErrorWithClusterBreakingPotential is
// refused (422), as Kubernetes refuses it here.
func (s *Server) serveDeleteCollection(w http.ResponseWriter, req *http.Request, t target) {
	p, err := request.ParseList(req.URL.Query(), t.res.fields, t.res.GetAttrs)
	if err == nil && p.Watch {
		err = badRequest("watch is not allowed with deletecollection")
	}
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	opts, err := s.deleteOptions(w, req)
	if err == nil && utilptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		err = apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "",
			field.ErrorList{field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
				"is not allowed with DELETECOLLECTION, try again after removing the option")})
	}
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	lopts := p.Options
	lopts.Predicate.Limit, lopts.Predicate.Continue = 0, "" // everything that matches goes
	list := &unstructured.UnstructuredList{}
	if err := t.res.Storage.GetList(req.Context(), t.collectionKey(), lopts, list); err != nil {
		s.writeError(w, req, err)
		return
	}
	ropts := registryDeleteOptions(req, opts)
	deleted := list.Items[:0]
	for _, item := range list.Items {
		it := target{res: t.res, namespace: item.GetNamespace(), name: item.GetName()}
		out := &unstructured.Unstructured{}
		_, err := t.res.registry.Delete(req.Context(), it.objectKey(), out, ropts)
		switch {
		case storage.IsCode(err, storage.CodeNotFound):
			continue
		case err != nil:
			s.writeError(w, req, t.res.objectError(err, it.name))
			return
		}
		deleted = append(deleted, *out)
	}
	list.Items = deleted
	s.writeList(w, req, t.res, list)
}

package request

import (
	"net/http"
	"strings"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FieldManager is the request's manager: the fieldManager parameter
// or, without one, the User-Agent up to its first "/", as Kubernetes
// names it. A fieldManager longer than 128 characters or with
// non-printable characters is 422.
func FieldManager(req *http.Request) (string, error) {
	q := req.URL.Query()
	m := q.Get("fieldManager")
	if !q.Has("fieldManager") {
		ua := req.Header.Get("User-Agent")
		m, _, _ = strings.Cut(ua, "/")
		if len(m) > 128 {
			m = m[:128]
		}
		return m, nil
	}
	p := field.NewPath("fieldManager")
	var errs field.ErrorList
	if len(m) > 128 {
		errs = append(errs, field.TooLong(p, "", 128))
	}
	for _, c := range m {
		if !unicode.IsPrint(c) {
			errs = append(errs, field.Invalid(p, m, "must only contain printable characters"))
			break
		}
	}
	if len(errs) > 0 {
		return "", apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", errs)
	}
	return m, nil
}

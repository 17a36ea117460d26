package schema

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// OpenAPI serves the OpenAPI documents built from the resources' schemas:
// /openapi/v2 (JSON, or protobuf as kubectl asks for it) and /openapi/v3
// with one document per group-version. kube-openapi's handlers do the
// serialisation, content negotiation and ETags.
type OpenAPI struct {
	v2 http.Handler
	v3 *handler3.OpenAPIService
	// v3Paths are the group-version paths with a v3 document, such as
	// "apis/demo.listwatch.dev/v1".
	v3Paths map[string]bool
}

// NewOpenAPI builds the documents of resources.
func NewOpenAPI(resources []*Type, gitVersion string) (*OpenAPI, error) {
	sw, err := swaggerV2(resources, gitVersion)
	if err != nil {
		return nil, err
	}
	v2mux := http.NewServeMux()
	handler.NewOpenAPIService(sw).RegisterOpenAPIVersionedService("/openapi/v2", v2mux)
	o := &OpenAPI{v2: v2mux, v3: handler3.NewOpenAPIService(), v3Paths: map[string]bool{}}
	byGV := map[string][]*Type{}
	var gvs []string
	for _, r := range resources {
		if _, ok := byGV[r.wire.APIVersion()]; !ok {
			gvs = append(gvs, r.wire.APIVersion())
		}
		byGV[r.wire.APIVersion()] = append(byGV[r.wire.APIVersion()], r)
	}
	for _, gv := range gvs {
		doc, err := openAPIV3(byGV[gv], gitVersion)
		if err != nil {
			return nil, err
		}
		p := strings.TrimPrefix(PathPrefix(byGV[gv][0].group, byGV[gv][0].version), "/")
		o.v3.UpdateGroupVersion(p, doc)
		o.v3Paths[p] = true
	}
	return o, nil
}

// Serve answers a request below /openapi; it reports false for paths
// that have no document.
func (o *OpenAPI) Serve(w http.ResponseWriter, req *http.Request, parts []string) bool {
	switch {
	case len(parts) == 2 && parts[1] == "v2":
		o.v2.ServeHTTP(w, req)
	case len(parts) == 2 && parts[1] == "v3":
		o.v3.HandleDiscovery(w, req)
	case len(parts) > 2 && parts[1] == "v3" && o.v3Paths[strings.Join(parts[2:], "/")]:
		o.v3.HandleGroupVersion(w, req)
	default:
		return false
	}
	return true
}

// definitionName names a kind's schema as Kubernetes names a CRD's: the
// group's labels reversed, then version and kind
// (demo.listwatch.dev/v1 Widget is dev.listwatch.demo.v1.Widget); core
// group kinds are named as Kubernetes names them (io.k8s.api.core.v1.Node).
func definitionName(group, version, kind string) string {
	if group == "" {
		return "io.k8s.api.core." + version + "." + kind
	}
	labels := strings.Split(group, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "." + version + "." + kind
}

// gvkExtension is the x-kubernetes-group-version-kind value of a kind.
func gvkExtension(r *Type, kind string) map[string]any {
	return map[string]any{"group": r.group, "version": r.version, "kind": kind}
}

// definitions returns the schemas of r's kind and list kind, with
// references made by ref.
func (r *Type) definitions(ref func(string) spec.Ref) (map[string]spec.Schema, error) {
	obj := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	if r.schema != nil {
		// A deep copy: the document must not share maps with the config.
		b, err := json.Marshal(r.schema)
		if err != nil {
			return nil, fmt.Errorf("server: schema of %s: %w", r.plural, err)
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("server: schema of %s: %w", r.plural, err)
		}
	} else {
		obj.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	}
	if obj.Properties == nil {
		obj.Properties = map[string]spec.Schema{}
	}
	typeMeta(obj.Properties, ref(defObjectMeta), "Standard object's metadata.")
	obj.AddExtension("x-kubernetes-group-version-kind", []any{gvkExtension(r, r.kind)})

	item := spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(definitionName(r.group, r.version, r.kind))}}
	list := spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"object"},
		Description: r.listKind + " is a list of " + r.kind + ".",
		Required:    []string{"items"},
		Properties:  map[string]spec.Schema{"items": *spec.ArrayProperty(&item)},
	}}
	typeMeta(list.Properties, ref(defListMeta), "Standard list metadata.")
	list.AddExtension("x-kubernetes-group-version-kind", []any{gvkExtension(r, r.listKind)})
	return map[string]spec.Schema{
		definitionName(r.group, r.version, r.kind):     obj,
		definitionName(r.group, r.version, r.listKind): list,
	}, nil
}

// typeMeta adds apiVersion, kind and metadata (a reference to metaRef) to
// the properties props.
func typeMeta(props map[string]spec.Schema, metaRef spec.Ref, metaDesc string) {
	apiVersion := spec.StringProperty()
	apiVersion.Description = "APIVersion defines the versioned schema of this representation of an object."
	kind := spec.StringProperty()
	kind.Description = "Kind is a string value representing the REST resource this object represents."
	props["apiVersion"] = *apiVersion
	props["kind"] = *kind
	props["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{Ref: metaRef, Description: metaDesc}}
}

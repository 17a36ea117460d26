package schema

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/listwatch/listwatch/server/wire"
)

// operation describes one API operation independently of the OpenAPI
// version it is written in.
type operation struct {
	method   string // GET, POST, PUT, PATCH or DELETE
	action   string // x-kubernetes-action
	id       string
	kind     string   // the kind the operation is about (Kind or ListKind)
	query    []string // query parameters
	body     bool
	consumes []string
}

// The query parameters of each kind of operation, as Kubernetes
// advertises them (kubectl checks that fieldValidation is among a patch's
// parameters before relying on the server to validate).
var (
	listQuery   = []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"}
	writeQuery  = []string{"dryRun", "fieldManager", "fieldValidation"}
	patchQuery  = []string{"dryRun", "fieldManager", "fieldValidation", "force"}
	getQuery    = []string{"resourceVersion"}
	deleteQuery = []string{"dryRun"}
)

// operations returns r's paths (below the server root) and their
// operations.
func (r *Type) operations() map[string][]operation {
	base := PathPrefix(r.group, r.version)
	coll, item := base+"/"+r.plural, base+"/"+r.plural+"/{name}"
	out := map[string][]operation{}
	if r.namespaced {
		out[coll] = []operation{{method: "GET", action: "list", id: "list" + r.kind + "ForAllNamespaces", kind: r.listKind, query: listQuery}}
		coll = base + "/namespaces/{namespace}/" + r.plural
		item = coll + "/{name}"
	}
	out[coll] = append(out[coll],
		operation{method: "GET", action: "list", id: "list" + r.kind, kind: r.listKind, query: listQuery},
		operation{method: "POST", action: "post", id: "create" + r.kind, kind: r.kind, query: writeQuery, body: true,
			consumes: []string{"application/json"}})
	out[item] = []operation{
		{method: "GET", action: "get", id: "read" + r.kind, kind: r.kind, query: getQuery},
		{method: "PUT", action: "put", id: "replace" + r.kind, kind: r.kind, query: writeQuery, body: true,
			consumes: []string{"application/json"}},
		{method: "PATCH", action: "patch", id: "patch" + r.kind, kind: r.kind, query: patchQuery, body: true,
			consumes: []string{wire.MediaJSONPatch, wire.MediaMergePatch, wire.MediaApplyPatch}},
		{method: "DELETE", action: "delete", id: "delete" + r.kind, kind: r.kind, query: deleteQuery},
	}
	return out
}

// pathParams are the path parameters path has.
func pathParams(path string) []string {
	var out []string
	for _, p := range []string{"namespace", "name"} {
		if strings.Contains(path, "/{"+p+"}") {
			out = append(out, p)
		}
	}
	return out
}

// queryParamType is the type of a query parameter.
func queryParamType(name string) string {
	switch name {
	case "allowWatchBookmarks", "watch", "force", "sendInitialEvents":
		return "boolean"
	case "limit", "timeoutSeconds":
		return "integer"
	}
	return "string"
}

// pathsV2 writes r's operations as Swagger 2.0 paths into paths.
func (r *Type) pathsV2(paths map[string]spec.PathItem) {
	ops := r.operations()
	for _, path := range slices.Sorted(maps.Keys(ops)) {
		var item spec.PathItem
		for _, p := range pathParams(path) {
			item.Parameters = append(item.Parameters, spec.Parameter{
				ParamProps:   spec.ParamProps{Name: p, In: "path", Required: true},
				SimpleSchema: spec.SimpleSchema{Type: "string"}})
		}
		for _, op := range ops[path] {
			def := spec.Schema{SchemaProps: spec.SchemaProps{Ref: refV2(definitionName(r.group, r.version, op.kind))}}
			o := &spec.Operation{OperationProps: spec.OperationProps{
				ID: op.id, Consumes: op.consumes, Produces: []string{"application/json", "application/yaml"},
				Responses: &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{
					200: {ResponseProps: spec.ResponseProps{Description: "OK", Schema: &def}}}}},
			}}
			if op.body {
				body := def
				if op.method == "PATCH" {
					body = spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
				}
				o.Parameters = append(o.Parameters, spec.Parameter{ParamProps: spec.ParamProps{
					Name: "body", In: "body", Required: true, Schema: &body}})
			}
			for _, q := range op.query {
				o.Parameters = append(o.Parameters, spec.Parameter{ParamProps: spec.ParamProps{Name: q, In: "query"},
					SimpleSchema: spec.SimpleSchema{Type: queryParamType(q)}})
			}
			setOperation(r, op, o, &item.Get, &item.Post, &item.Put, &item.Patch, &item.Delete)
		}
		paths[path] = item
	}
}

// pathsV3 writes r's operations as OpenAPI 3 paths into paths.
func (r *Type) pathsV3(paths map[string]*spec3.Path) {
	ops := r.operations()
	for _, path := range slices.Sorted(maps.Keys(ops)) {
		item := &spec3.Path{}
		for _, p := range pathParams(path) {
			item.Parameters = append(item.Parameters, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
				Name: p, In: "path", Required: true, Schema: spec.StringProperty()}})
		}
		for _, op := range ops[path] {
			def := &spec.Schema{SchemaProps: spec.SchemaProps{Ref: refV3(definitionName(r.group, r.version, op.kind))}}
			o := &spec3.Operation{OperationProps: spec3.OperationProps{
				OperationId: op.id,
				Responses: &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{
					200: {ResponseProps: spec3.ResponseProps{Description: "OK", Content: map[string]*spec3.MediaType{
						"application/json": {MediaTypeProps: spec3.MediaTypeProps{Schema: def}}}}}}}},
			}}
			if op.body {
				body := def
				if op.method == "PATCH" {
					body = &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
				}
				content := map[string]*spec3.MediaType{}
				for _, ct := range op.consumes {
					content[ct] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: body}}
				}
				o.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Required: true, Content: content}}
			}
			for _, q := range op.query {
				s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{queryParamType(q)}}}
				o.Parameters = append(o.Parameters, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
					Name: q, In: "query", Schema: s}})
			}
			setOperation(r, op, o, &item.Get, &item.Post, &item.Put, &item.Patch, &item.Delete)
		}
		paths[path] = item
	}
}

// setOperation gives o, an OpenAPI v2 or v3 operation of r, op's
// Kubernetes extensions and stores it in the field of op's method among
// get, post, put, patch and del (a path item's).
func setOperation[O interface{ AddExtension(string, any) }](r *Type, op operation, o O, get, post, put, patch, del *O) {
	o.AddExtension("x-kubernetes-action", op.action)
	o.AddExtension("x-kubernetes-group-version-kind", gvkExtension(r, op.kind))
	switch op.method {
	case "GET":
		*get = o
	case "POST":
		*post = o
	case "PUT":
		*put = o
	case "PATCH":
		*patch = o
	case "DELETE":
		*del = o
	}
}

func refV2(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
func refV3(name string) spec.Ref { return spec.MustCreateRef("#/components/schemas/" + name) }

// swaggerV2 is the OpenAPI v2 document of every resource.
func swaggerV2(resources []*Type, gitVersion string) (*spec.Swagger, error) {
	sw := &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "listwatch", Version: gitVersion}},
		Paths:       &spec.Paths{Paths: map[string]spec.PathItem{}},
		Definitions: spec.Definitions(metaDefinitions(refV2)),
	}}
	for _, r := range resources {
		defs, err := r.definitions(refV2)
		if err != nil {
			return nil, err
		}
		maps.Copy(sw.Definitions, defs)
		r.pathsV2(sw.Paths.Paths)
	}
	return sw, nil
}

// openAPIV3 is the OpenAPI v3 document of one group-version's resources.
func openAPIV3(resources []*Type, gitVersion string) (*spec3.OpenAPI, error) {
	doc := &spec3.OpenAPI{
		Version:    "3.0.0",
		Info:       &spec.Info{InfoProps: spec.InfoProps{Title: "listwatch", Version: gitVersion}},
		Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{}},
		Components: &spec3.Components{Schemas: map[string]*spec.Schema{}},
	}
	for name, s := range metaDefinitions(refV3) {
		doc.Components.Schemas[name] = &s
	}
	for _, r := range resources {
		defs, err := r.definitions(refV3)
		if err != nil {
			return nil, err
		}
		for name, s := range defs {
			doc.Components.Schemas[name] = &s
		}
		r.pathsV3(doc.Paths.Paths)
	}
	return doc, nil
}

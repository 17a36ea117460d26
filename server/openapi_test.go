package server

import (
	"encoding/json"
	"net/http"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOpenAPIDocuments: /openapi/v2 in JSON and protobuf and /openapi/v3
// with its group-version document describe Widget with its schema, the
// group-version-kind extension and a patch operation that takes
// fieldValidation (which kubectl looks for).
func TestOpenAPIDocuments(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	const widgetDef = "dev.listwatch.demo.v1.Widget"

	r := f.doAccept(http.MethodGet, "/openapi/v2", "", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", nil)
	require.Equal(t, http.StatusOK, r.code)
	require.Equal(t, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", r.header.Get("Content-Type"))
	var doc openapi_v2.Document
	require.NoError(t, proto.Unmarshal(r.body, &doc))
	var found bool
	for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
		if d.GetName() == widgetDef {
			found = true
			require.Contains(t, d.GetValue().GetProperties().String(), "replicas")
		}
	}
	require.True(t, found, "v2 protobuf has %s", widgetDef)

	r = f.doAccept(http.MethodGet, "/openapi/v2", "", "application/json", nil)
	require.Equal(t, http.StatusOK, r.code)
	var v2 struct {
		Definitions map[string]struct {
			GVK []map[string]string `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
		Paths map[string]struct {
			Patch struct {
				Parameters []struct{ Name string } `json:"parameters"`
			} `json:"patch"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &v2))
	require.Equal(t, []map[string]string{{"group": group, "version": "v1", "kind": "Widget"}}, v2.Definitions[widgetDef].GVK)
	var params []string
	for _, p := range v2.Paths["/apis/"+group+"/v1/namespaces/{namespace}/widgets/{name}"].Patch.Parameters {
		params = append(params, p.Name)
	}
	require.Contains(t, params, "fieldValidation")

	r = f.doAccept(http.MethodGet, "/openapi/v3", "", "application/json", nil)
	require.Equal(t, http.StatusOK, r.code)
	var disc struct {
		Paths map[string]struct{ ServerRelativeURL string } `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &disc))
	gvURL := disc.Paths["apis/"+group+"/v1"].ServerRelativeURL
	require.NotEmpty(t, gvURL, string(r.body))
	r = f.doAccept(http.MethodGet, gvURL, "", "application/json", nil)
	require.Equal(t, http.StatusOK, r.code)
	var v3 struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(r.body, &v3))
	require.Contains(t, v3.Components.Schemas[widgetDef].Properties, "spec")
	require.Contains(t, v3.Components.Schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")

	f.doAccept(http.MethodGet, "/openapi/v3/apis/nope/v1", "", "application/json", nil).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

package schema

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/listwatch/listwatch/server/wire"
)

// PrinterColumn is one column of a resource's table output (what
// `kubectl get` prints), like a CRD's additionalPrinterColumns. NAME comes
// first and AGE last in every table; these columns go between them.
type PrinterColumn struct {
	// Name is the column header, such as "Size". Required, unique.
	Name string
	// Type is the OpenAPI type of the values: "string", "integer",
	// "number", "boolean" or "date" (an RFC 3339 timestamp shown as an
	// age, such as 5m). Required.
	Type string
	// JSONPath selects the value in each object: field names and list
	// indices only, such as .spec.replicas or .status.conditions[0].type.
	// An object without the value shows an empty cell. Required.
	JSONPath string
	// Format is an OpenAPI format hint for clients ("" for none).
	Format string
	// Description is shown by clients that describe columns.
	Description string
	// Priority 0 columns are always shown; higher ones only with
	// `kubectl get -o wide`.
	Priority int32
}

// tableColumn is a configured column with its parsed path.
type tableColumn struct {
	def  metav1.TableColumnDefinition
	path simplePath
}

// printerColumnTypes are the column types a PrinterColumn may have.
var printerColumnTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "date": true}

// tableColumns checks r's printer columns and returns the table's columns:
// NAME, the configured ones, then AGE (unless a configured column is
// named Age).
func tableColumns(cols []PrinterColumn) ([]tableColumn, error) {
	name := tableColumn{def: metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name",
		Description: "Name must be unique within a namespace."}, path: simplePath{{field: "metadata"}, {field: "name"}}}
	out := []tableColumn{name}
	seen := map[string]bool{"name": true}
	for _, c := range cols {
		if c.Name == "" || seen[strings.ToLower(c.Name)] {
			return nil, fmt.Errorf("printer column %q: names must be non-empty, unique and not Name", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if !printerColumnTypes[c.Type] {
			return nil, fmt.Errorf("printer column %q: type %q is not one of string, integer, number, boolean, date", c.Name, c.Type)
		}
		p, err := parseSimplePath(c.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("printer column %q: %w", c.Name, err)
		}
		out = append(out, tableColumn{def: metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format,
			Description: c.Description, Priority: c.Priority}, path: p})
	}
	if !seen["age"] {
		out = append(out, tableColumn{def: metav1.TableColumnDefinition{Name: "Age", Type: "date",
			Description: "Time since the object was created."},
			path: simplePath{{field: "metadata"}, {field: "creationTimestamp"}}})
	}
	return out, nil
}

// WantsTable reports whether the Accept header asks for a meta.k8s.io/v1
// Table before (or instead of) plain JSON, as kubectl get does.
func WantsTable(values []string) bool {
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			switch {
			case mt != wire.MediaJSON && mt != "application/*" && mt != "*/*":
			case params["as"] == "":
				return false
			case params["as"] == "Table" && params["g"] == "meta.k8s.io" && params["v"] == "v1":
				return true
			}
		}
	}
	return false
}

// IncludeObject reads the includeObject parameter: None, Metadata (the
// default) or Object.
func IncludeObject(req *http.Request) (metav1.IncludeObjectPolicy, error) {
	switch v := metav1.IncludeObjectPolicy(req.URL.Query().Get("includeObject")); v {
	case "":
		return metav1.IncludeMetadata, nil
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		return v, nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("includeObject %q is not one of None, Metadata, Object", v))
	}
}

// Table builds the Table of objects; listMeta is the list's metadata
// (nil for a single object).
func (r *Type) Table(objs []unstructured.Unstructured, listMeta map[string]any, include metav1.IncludeObjectPolicy, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ColumnDefinitions: make([]metav1.TableColumnDefinition, len(r.columns)), Rows: []metav1.TableRow{}}
	for i, c := range r.columns {
		t.ColumnDefinitions[i] = c.def
	}
	if listMeta != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(listMeta, &t.ListMeta); err != nil {
			return nil, err
		}
	}
	for i := range objs {
		row, err := r.tableRow(&objs[i], include, now)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// tableRow is one object's row.
func (r *Type) tableRow(u *unstructured.Unstructured, include metav1.IncludeObjectPolicy, now time.Time) (metav1.TableRow, error) {
	row := metav1.TableRow{Cells: make([]any, len(r.columns))}
	for i, c := range r.columns {
		v, ok := c.path.get(u.Object)
		if !ok {
			continue
		}
		row.Cells[i] = cell(c.def.Type, v, now)
	}
	var obj any
	switch include {
	case metav1.IncludeObject:
		obj = r.wire.WithTypeMeta(u.Object)
	case metav1.IncludeMetadata:
		obj = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": u.Object["metadata"]}
	}
	if obj != nil {
		b, err := json.Marshal(obj)
		if err != nil {
			return row, err
		}
		row.Object = runtime.RawExtension{Raw: b}
	}
	return row, nil
}

// cell converts a value for a column of type typ: dates become ages, other
// values are given as they are stored when their type fits, else as text.
func cell(typ string, v any, now time.Time) any {
	switch typ {
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil
		}
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return s
		}
		return duration.HumanDuration(now.Sub(ts))
	case "integer":
		if n, ok := v.(int64); ok {
			return n
		}
	case "number":
		switch n := v.(type) {
		case int64, float64:
			return n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "string":
		if s, ok := v.(string); ok {
			return s
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// TableMediaType is the Content-Type of a Table response.
const TableMediaType = "application/json;as=Table;v=v1;g=meta.k8s.io"

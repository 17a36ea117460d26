package schema

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/listwatch/listwatch/server/wire"
)

// TypeConfig describes the objects of one resource (see the server's
// Resource, whose fields these are).
type TypeConfig struct {
	Group, Version, Kind, Plural string
	Namespaced                   bool
	// Schema is the structural schema of the objects; nil: any fields.
	Schema *spec.Schema
	// PrinterColumns are the columns of the table output.
	PrinterColumns []PrinterColumn
	// Validate, when set, checks every object about to be stored.
	Validate func(u *unstructured.Unstructured) error
}

// Type is what the server knows of one resource's objects from its
// schema: how to check and normalize a written object (Normalize,
// CheckStorable, ...), its table output (Table), its managed fields and
// server-side apply (RecordUpdate, Apply, set by NewFieldManagers) and its
// OpenAPI definitions (NewOpenAPI).
type Type struct {
	group, version, kind, plural string
	listKind                     string
	namespaced                   bool
	gv                           schema.GroupVersion
	schema                       *spec.Schema
	validate                     func(u *unstructured.Unstructured) error
	wire                         *wire.Kind
	// validator checks objects against schema; nil without one.
	validator *validate.SchemaValidator
	// columns are the table output's columns.
	columns []tableColumn
	// fieldManager records managedFields and merges apply patches.
	fieldManager *managedfields.FieldManager
}

// NewType checks c's printer columns and schema and returns its Type.
// Its field manager is set by NewFieldManagers.
func NewType(c TypeConfig) (*Type, error) {
	t := &Type{group: c.Group, version: c.Version, kind: c.Kind, plural: c.Plural, listKind: c.Kind + "List",
		namespaced: c.Namespaced, gv: schema.GroupVersion{Group: c.Group, Version: c.Version}, schema: c.Schema,
		validate: c.Validate}
	t.wire = wire.NewKind(t.gv.String(), c.Kind)
	var err error
	if t.columns, err = tableColumns(c.PrinterColumns); err != nil {
		return nil, err
	}
	if t.validator, err = NewValidator(c.Schema); err != nil {
		return nil, err
	}
	return t, nil
}

// CheckPrinterColumns reports what is wrong with cols, if anything.
func CheckPrinterColumns(cols []PrinterColumn) error {
	_, err := tableColumns(cols)
	return err
}

// ValidationErrors are obj's violations of the schema (see Errors).
func (r *Type) ValidationErrors(obj map[string]any) field.ErrorList {
	return Errors(r.validator, obj)
}

// PathPrefix is the URL path below which a group version's resources live:
// /api/{version} for the core group, /apis/{group}/{version} otherwise.
func PathPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

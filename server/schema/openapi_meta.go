package schema

import "k8s.io/kube-openapi/pkg/validation/spec"

// The definition names of the apimachinery types the documents refer to,
// as Kubernetes names them, so that clients resolve them the same way.
const (
	defObjectMeta        = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	defListMeta          = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	defOwnerReference    = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"
	defManagedFieldEntry = "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"
	defTime              = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
	defFieldsV1          = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
)

// metaDefinitions returns the schemas of ObjectMeta, ListMeta and the types
// they use (apimachinery ships no generated OpenAPI definitions, and
// k8s.io/api may not be imported here). ref turns a definition name into a
// reference in the document being built. The list types and map keys are
// the ones Kubernetes declares, so server-side apply merges metadata as it
// does there: labels and annotations by key, finalizers as a set,
// ownerReferences by uid.
func metaDefinitions(ref func(string) spec.Ref) map[string]spec.Schema {
	str := func(desc string) spec.Schema {
		s := spec.StringProperty()
		s.Description = desc
		return *s
	}
	int64p := func(desc string) spec.Schema {
		s := spec.Int64Property()
		s.Description = desc
		return *s
	}
	refTo := func(name, desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(name), Description: desc}}
	}
	stringMap := func(desc string) spec.Schema {
		s := spec.MapProperty(spec.StringProperty())
		s.Description = desc
		return *s
	}
	arrayOf := func(item spec.Schema, desc, listType string, keys ...string) spec.Schema {
		s := spec.ArrayProperty(&item)
		s.Description = desc
		s.AddExtension("x-kubernetes-list-type", listType)
		if len(keys) > 0 {
			s.AddExtension("x-kubernetes-list-map-keys", keys)
		}
		return *s
	}
	object := func(desc string, required []string, props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Description: desc,
			Required: required, Properties: props}}
	}
	timeSchema := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Format: "date-time",
		Description: "Time is a timestamp in RFC 3339 form."}}
	fieldsV1 := object("FieldsV1 is the set of fields a manager owns, in the FieldsV1 format.", nil, nil)
	finalizers := arrayOf(*spec.StringProperty(), "Finalizers must be empty before the object is deleted.", "set")
	return map[string]spec.Schema{
		defTime:     timeSchema,
		defFieldsV1: fieldsV1,
		defOwnerReference: object("OwnerReference names an object this one belongs to.",
			[]string{"apiVersion", "kind", "name", "uid"}, map[string]spec.Schema{
				"apiVersion":         str("API version of the owner."),
				"kind":               str("Kind of the owner."),
				"name":               str("Name of the owner."),
				"uid":                str("UID of the owner."),
				"controller":         *spec.BoolProperty(),
				"blockOwnerDeletion": *spec.BoolProperty(),
			}),
		defManagedFieldEntry: object("ManagedFieldsEntry records the fields one manager owns.", nil, map[string]spec.Schema{
			"manager":     str("Manager is the name of the workflow managing these fields."),
			"operation":   str("Operation is Apply or Update."),
			"apiVersion":  str("APIVersion of the fields."),
			"time":        refTo(defTime, "Time of the operation that last changed the fields."),
			"fieldsType":  str("FieldsType is the format of fieldsV1; always FieldsV1."),
			"fieldsV1":    refTo(defFieldsV1, "FieldsV1 is the set of owned fields."),
			"subresource": str("Subresource the operation was made on."),
		}),
		defObjectMeta: object("ObjectMeta is metadata every stored object has.", nil, map[string]spec.Schema{
			"name":                       str("Name is unique within a namespace."),
			"generateName":               str("GenerateName is a prefix the server completes into a unique name when name is empty."),
			"namespace":                  str("Namespace of the object."),
			"selfLink":                   str("Deprecated and unused."),
			"uid":                        str("UID is the unique identity the server assigns."),
			"resourceVersion":            str("ResourceVersion is the version of the object, for optimistic concurrency and watches."),
			"generation":                 int64p("Generation counts changes to the desired state."),
			"creationTimestamp":          refTo(defTime, "CreationTimestamp is when the object was created."),
			"deletionTimestamp":          refTo(defTime, "DeletionTimestamp is when the object was asked to be deleted."),
			"deletionGracePeriodSeconds": int64p("Seconds allowed for graceful deletion."),
			"labels":                     stringMap("Labels are keys and values for selecting objects."),
			"annotations":                stringMap("Annotations are keys and values for tools."),
			"ownerReferences": arrayOf(refTo(defOwnerReference, ""), "OwnerReferences name the objects this one belongs to.",
				"map", "uid"),
			"finalizers":    finalizers,
			"managedFields": arrayOf(refTo(defManagedFieldEntry, ""), "ManagedFields records which manager owns which fields.", "atomic"),
		}),
		defListMeta: object("ListMeta is metadata of lists.", nil, map[string]spec.Schema{
			"resourceVersion":    str("ResourceVersion of the list."),
			"continue":           str("Continue token of the next page."),
			"remainingItemCount": int64p("How many items follow this page, when known."),
			"selfLink":           str("Deprecated and unused."),
		}),
	}
}

// Package schema owns what a resource's schema means to the server, for
// the objects written to it and the documents describing it: a Type per
// resource (NewType) that checks and normalizes written objects
// (Normalize: type meta, metadata, structural schema, the Validate hook;
// CheckWritable and CheckStorable: nesting depth), its Table output
// (Table, PrinterColumn), its managed fields and server-side apply
// (NewFieldManagers, RecordUpdate, Apply), the OpenAPI v2 and v3
// documents (NewOpenAPI), checking that the server can serve a schema
// (CheckStructural), validating objects as Kubernetes reports a custom
// resource's errors (NewValidator, Errors), and the fieldValidation
// parameter: finding duplicate and unknown fields, pruning the unknown
// ones and applying Strict, Warn or Ignore (FieldProblems,
// EnforceFieldValidation). Package server calls these; this package knows
// nothing of the server.
package schema

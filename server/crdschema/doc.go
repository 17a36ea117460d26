// Package crdschema owns what a resource's OpenAPI v3 schema (a structural
// schema, as a CRD carries) means for the objects written to it: checking
// that the server can serve the schema (CheckStructural), validating
// objects against it as Kubernetes reports a custom resource's errors
// (NewValidator, Errors), and the fieldValidation parameter: finding
// duplicate and unknown fields, pruning the unknown ones and applying
// Strict, Warn or Ignore (FieldProblems, EnforceFieldValidation). Package
// server calls these; this package knows nothing of the server.
package crdschema

// Package wire owns the bytes the server writes: a reflection-free JSON
// encoder for unstructured values whose output is encoding/json's without
// its HTML escaping (AppendJSON, AppendString).
// Package server calls these; this package knows nothing of the server.
package wire

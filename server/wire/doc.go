// Package wire owns the bytes the server writes: a reflection-free JSON
// encoder for unstructured values whose output is encoding/json's without
// its HTML escaping (AppendJSON, AppendString), and the bounded queue of
// encoded lines between an HTTP watch's reader and its writer (LineQueue).
// Package server calls these; this package knows nothing of the server.
package wire

package cacher

import "github.com/listwatch/listwatch/storage"

// The cacher declares the storage's encoding capabilities that an HTTP
// server looks for.
var (
	_ storage.EncodedLister  = (*Cacher)(nil)
	_ storage.EncodedWatcher = (*Cacher)(nil)
)

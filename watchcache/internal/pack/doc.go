// Package pack is the watch cache's memory engineering, behind one small
// interface (Packer) and one switch (watchcache.Config.NoPacking, which
// makes the cache use Off). "Compaction" in watchcache means etcd's
// compaction only; what this package does is called packing.
//
// Each trick is kept because a benchmark shows it pays on objects whose
// contents are mostly their own, as real objects' are: 20,000 widgets of
// about 1 KiB, each with an 828-byte annotation of its own, two labels
// from 100 sets and one of 100 node names.
//
//	go test -run '^$' -bench 'Memory' -benchtime 1x ./watchcache/
//
// Measured on 2026-11-29 (2 shared cores): a decoded cache holds
// 2,241 bytes per object (2.10x the encoded size) without packing and
// 1,814 (1.70x) with it; an encoded cache (Config.Codec) 1,730 bytes
// (1.62x) without and 1,316 (1.23x) with it. The gain of each trick is
// what the figure loses when that trick alone is left out:
//
//   - Equal map[string]string values at one place of a type (label sets,
//     node selectors) share one map: 334 bytes per object. Go's unique
//     package takes comparable values only, so maps are found by a hash
//     of their content (maps.go). Maps that do not repeat are rebuilt with
//     shared keys and values.
//   - Strings that repeat at one place (namespace, kind, node name, label
//     and annotation keys and values) become one canonical copy, by
//     unique.Make: 78 bytes per object. A place whose values mostly differ
//     (names, UIDs) is judged so after 256 values and no longer looked up;
//     the tables that keep canonical copies alive are bounded (4,096
//     values a place, 16 MiB in all). The walk is by reflection over
//     exported fields, one plan per type (plan.go): about 1.7 µs an
//     object, against 23 µs to decode it (BenchmarkPackObject).
//   - An encoded element's label set is shared with equal ones: 367 bytes
//     per object.
//   - An encoded element's encoding, key and field values share one
//     allocation when the allocator's size classes make that no larger
//     (layout.go): 49 bytes per object. The size-class table is checked
//     against the running runtime by a test.
//   - An encoded element points weakly at the newest object decoded from
//     it (weak.go): readers at the same time, such as the watchers one
//     event is delivered to, share one decoding instead of decoding it
//     each (23 µs a widget), and a decoded object nobody holds costs no
//     memory. weak.Pointer needs a static type, so the reference keeps
//     the object's address and rebuilds it with reflect.NewAt.
//
// Deleted: packing each decoded object's remaining strings into one
// allocation (unsafe.String, steered by the size classes) saved 33 bytes
// per object (1.5%) on top of the above.
//
// Only this package uses unsafe: Layout's strings view one allocation,
// Bytes views an encoding kept as a string, and Ref rebuilds an object
// from its address.
package pack

// Package layering holds the test that keeps the project's imports
// flowing one way: each package may import only packages of a lower layer
// or of its own group. The layers, top first:
//
//	cmd/stowage
//	httpapi, bench                   (and internal/testutil, for tests)
//	stowage (the root package)
//	internal/dmap, internal/testhook
//	backup
//	cluster
//	partition
//	mapstore, checkpoint
//	config
//	fsbackend, serde                 (serde/keyhash: the key hash of the storage format)
//	internal/parallel                (a bounded loop, for anyone; likewise internal/prefault)
//
// A lower package that must call a higher one does so through an
// interface it defines itself (memberlist's delegate style).
package layering

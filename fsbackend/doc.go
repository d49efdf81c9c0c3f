// Package fsbackend is the one small storage contract that the map store
// and the checkpoint storage are written against, in the manner of pebble's
// vfs and Go's io/fs.
//
// The contract (FS, Writer, Reader) states the durability meaning of each
// method. What only some back ends can do is a Capability: DurableAppend
// (local disk: Sync is fdatasync), SyncOpen (HDFS: Sync is hsync, and the
// synced bytes are visible to readers once the file is closed or, after its
// writer died, recovered through Recoverer), AtomicRename (local, HDFS),
// ConditionalCreate (every back end here) and AtomicRemoveAll (HDFS, memfs:
// a recursive delete takes the whole tree at once). Callers branch on capabilities,
// never on the back end's type: the map store appends and syncs segments on
// DurableAppend back ends, writes one immutable file per batch elsewhere,
// and on SyncOpen back ends appends a lone writer's small batches to an
// open file and syncs it.
// DirSyncer is an optional interface, found with Deferred: where directory
// entries become durable only with a directory sync (local disk), a caller
// can make several changes in one directory and sync it once. DirRemover
// deletes a directory's tree in one call where the back end can, and
// DirRenamer (local disk) moves one in one atomic step.
//
// Implementations live in sub-packages: local (the default), hdfs, and the
// object stores. errorfs wraps any FS to inject faults; memfs is an
// in-memory FS that can simulate a crash by dropping unsynced bytes;
// fsbackendtest is the conformance suite every back end runs.
package fsbackend

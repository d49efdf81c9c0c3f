// Package boltstore is a MapStore on one embedded bbolt file
// (go.etcd.io/bbolt), for single-member deployments that want their maps
// in one local key-value file rather than in the file map store. In the
// configuration it is map-store properties `type: bbolt` and `path: FILE`.
//
// # Durability
//
// Store, StoreAll, Delete and DeleteAll return only once the bbolt
// transaction holding their change committed, which bbolt fdatasyncs.
// Concurrent calls, of every map of the file, share transactions through
// a group commit: one writer commits everything queued while the previous
// commit ran, then hands on to the next; there is no fixed delay, so a
// lone writer waits for one fdatasync. This is bolt.DB.Batch without its
// timer: Batch starts each batch MaxBatchDelay (10 ms) after its first
// call and lets batches queue behind the writer lock, each paying its
// own fdatasync. A lone writer thus waits one fdatasync instead of 10 ms
// plus one (BenchmarkStore/writers=1 against BenchmarkBolt/Batch), and
// under load a commit takes whatever arrived during the previous one, so
// the faster the disk syncs, the further the group commit pulls ahead of
// Batch's one batch per 10 ms (BenchmarkCommit compares the two). As
// with Batch, if a shared transaction fails each change is retried alone,
// so one failing call fails only itself; the committed functions only put
// and delete bytes encoded beforehand, so running one twice is harmless.
//
// # Layout
//
// The file holds one top-level bucket per map, named by the map. In it:
//
//	"format"               1 byte format version (1), uvarint partition
//	                       count, then the key hash id ("xxh64")
//	<partition, 4 bytes    one sub-bucket per partition, named by the
//	 big endian>           partition number
//	    <key>              the serialized key ->
//	                       1 byte format version (1), uvarint epoch,
//	                       uvarint seq, then the value bytes
//	"versions"             a sub-bucket of each partition's highest version
//	    <partition>        uvarint epoch, uvarint seq
//
// The partition is not repeated in each value: it is the sub-bucket's
// name. Sub-buckets make EAGER loading fast: LoadPartition reads only its
// partition's pages, in key order, instead of scanning the whole map and
// filtering. A record whose Partition is not partition.Of(Key, partitions)
// is refused, since Load finds a key by hashing it. A map stored with
// another partition count is re-hashed into the new count's buckets by
// Open, in one transaction; versions are kept. Deleted entries are
// removed from bbolt (there are no tombstones: bbolt is the state, not a
// log), so the highest version of each partition, deletes and epoch
// starts included, is kept in "versions", raised in the same transaction
// as the change; LastVersion reads it, and the map starts its next epoch
// after it. bbolt keys are 1 to 32768 bytes: an empty key is refused.
//
// # Sharing the file
//
// Several maps may live in one file. bbolt locks the file with flock per
// open file, so every map of one process opened on the same path shares
// one *bolt.DB, reference counted; the file is closed when its last map
// is. Opening a map that is already open in this process fails with
// ErrMapOpen. Another process holding the file makes Open fail after
// Options.Timeout (default 1 s, never forever) with an error matching
// mapstore.ErrLocked that names the file. OpenFile holds a file with no
// map open in it (a member holds its bbolt file from start to stop, so a
// second member process on the same file fails at start), and lists its
// maps.
//
// # Reads
//
// Load, LoadAll and LoadAllKeys run in one read transaction each.
// LoadPartition copies entries out a few thousand at a time, each chunk in
// its own read transaction, and calls fn between them: fn may write to
// the store, and a slow fn never holds a read transaction that would hold
// back the file's growth. Every returned key and value is the caller's;
// they are carved out of shared 64 KiB blocks (one allocation per block,
// not two per entry), each cut to its own capacity. A stored value that
// cannot be decoded is an error from Load and LoadAll, and is skipped and
// reported through Options.OnDamage by LoadPartition.
//
// # Concurrency
//
// A Store is safe for concurrent use; Close waits for the calls in
// progress.
package boltstore

// Package filestore is the file map store: the MapStore that keeps a map on
// any fsbackend (local disk, HDFS, object stores) as group-committed log
// files plus per-partition snapshots written from memory.
//
// Writes: Store/Delete queue framed records; one flusher writes everything
// queued while the previous flush ran as one batch — appended and
// fdatasync'ed on local disk, one new closed file per batch elsewhere — and
// only then do the calls return. Each member run writes its own files and
// never modifies a finished one.
//
// Compaction: the owner of the data (the in-memory map) is the snapshot
// source. Partitions whose log has grown are snapshotted, the snapshot is
// read back, and log files every record of which is covered are deleted;
// when compaction falls behind, Admit makes new writes wait, so disk stays
// within about twice the live bytes plus one segment.
//
// Loading: Open scans the log once; ReplayPartition (or LoadPartition, the
// MapStore form) merges a partition's newest readable snapshot with its log
// by version. Torn tails are cut, damaged frames skipped and reported via
// Options.OnDamage, a damaged snapshot falls back to an older one, a missing
// META is rebuilt, and a changed partition count is re-hashed.
//
// The byte layout is in FORMAT.md. A Store is safe for concurrent use.
package filestore

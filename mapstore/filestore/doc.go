// Package filestore is the file map store: the MapStore that keeps a map on
// any fsbackend (local disk, HDFS, object stores) as group-committed log
// files plus per-partition snapshots written from memory.
//
// Writes: Store/Delete queue framed records, and only return once they are
// durable. On local disk one flusher appends everything queued while the
// previous flush ran as one batch and fdatasyncs it. Elsewhere (HDFS,
// object stores) each batch is a new closed file, and the commit is
// pipelined: whenever fewer than Options.MaxInFlight batch files are being
// written, everything queued goes out as the next one, so throughput is not
// one round trip per batch; a batch is acknowledged once its file and every
// earlier batch's are durable, and a crash that leaves a later batch's
// file without an earlier one's recovers neither (see FORMAT.md, "Links").
// Where Sync makes an open file durable but readers see it only once
// closed (HDFS: hsync), a small batch with nothing in flight, as a lone
// writer makes, is appended to a log file kept open and synced instead
// (openfile.go); a file a run that ended left open is recovered before it
// is read. Each member run writes its own files and never modifies a
// finished one.
//
// Compaction: the owner of the data (the in-memory map) is the snapshot
// source. Partitions whose log has grown are snapshotted, the snapshot is
// read back, and log files every record of which is covered are deleted.
// When the log outgrows half the live bytes plus a few MiB, the store asks
// the snapshot source what is live, and if the dead bytes are over that
// budget too (a log of new keys is all live, and snapshotting it would
// free nothing), the segment being written is finished early and every
// partition with records in the log is snapshotted, so the open segment's
// dead records go too whatever the segment size; once nothing was written for a second, the log, with
// the entries deletes made dead in the snapshots, is brought within half
// the live bytes (or 64 KiB). When compaction falls
// behind, Admit makes new writes wait. So a map's disk stays within about
// twice its live bytes plus 8 MiB while it is written, and within
// max(1.5x live, live + 64 KiB) a few seconds after writes stop.
//
// Loading: Open lists the map once and reads every log file, many at once
// on HDFS and object stores (where each read is a round trip) and, on
// local disk, with large segments checked in ranges on every processor
// beside the reads; on HDFS and object stores it then reads each
// partition's newest snapshot ahead, in the background. It
// keeps per partition only the versions and keys of its records (values
// stay in the bytes read, which loaded values share). A partition loaded
// again later (released, then loaded; or written since Open) reads
// storage afresh; the loads asked for at the same time share one listing
// and one read of the files, and the files read stay in memory for a
// couple of seconds so that a burst of such loads reads each file once. ReplayPartition (or
// ReplayPartitionKeys, which also hands over each key as a string the
// caller's map can keep, or LoadPartition, the MapStore form) merges a
// partition's newest readable snapshot with its log by version. Torn
// tails are cut, damaged frames skipped and reported via
// Options.OnDamage, a damaged snapshot falls back to an older one, a
// missing META is rebuilt, and a changed partition count is re-hashed.
//
// # Members sharing a map directory
//
// Several cluster members may use one map directory at the same time (a
// shared mount, HDFS, an object store): each opens its own Store on it with
// its own Options.RunID and tells it, through Options.IsLive, which other
// runs are still live. Each partition has one owner member at a time; only
// the owner writes the partition's records (to its own run's log) and
// snapshots it from its memory. A store owns the partitions it loaded
// (ReplayPartition, LoadPartition) and those it was given with Acquire,
// when their data reached the member's memory from the previous owner
// rather than from storage; Release gives a partition up. Release every
// partition the member does not own once it knows, so that what Open
// scanned for them is dropped and a later load reads storage afresh.
//
// A store deletes a log file only if it is its own finished file, or
// belongs to a run IsLive reports as ended (and was read in full after it
// ended), and only once every record in it is covered by the snapshots
// kept: for the partitions it owns, its own snapshots; for the others, the
// snapshots their owners wrote, which it learns by listing the directory
// again (a refresh, at most every Options.RefreshInterval, and only while
// some file waits for them). A snapshot another run wrote counts once two
// listings showed it unchanged and it ends with a complete end frame. The
// log budget behind Admit counts only what the store can collect by
// snapshotting its own partitions, so another member never holds its
// writes back. Without IsLive the store assumes it is alone, lists
// nothing more than Open does, and collects earlier runs' files as soon as
// its snapshots cover them.
//
// The byte layout is in FORMAT.md. A Store is safe for concurrent use.
package filestore

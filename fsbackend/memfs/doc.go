// Package memfs is an in-memory fsbackend.FS that can simulate a crash, in
// the manner of pebble's crash-simulating MemFS. It has the capabilities
// of the local back end: DurableAppend, AtomicRename and ConditionalCreate,
// and its writers implement fsbackend.Truncater.
//
// Every file keeps two states: the bytes written so far, which Open, Stat
// and List see, and the durable bytes, as of the writer's last Sync or
// Close. Crash drops every byte that is not durable and ends every open
// writer and reader: their later calls fail with fsbackend.ErrClosed.
// After a Crash the FS stays usable, as a restarted process would find
// the disk.
//
// Directory entries: a created file's entry, and the directories it lies
// in, become durable with its first Sync or Close, as on the local back
// end (which syncs the file's directory at its first Sync, or at Close,
// and the directories it makes at Create), so a file that was created and
// never synced nor closed disappears on Crash, and one that was synced
// once is there with its synced bytes while still being written. A
// Truncate is durable only with the next Sync or Close, as ftruncate is.
// Remove and Rename are durable when they return.
//
// Clone copies the whole state, written and durable, into an independent
// FS: Clone().Crash() shows what a crash at this instant would leave while
// the original goes on.
//
// An FS is safe for concurrent use.
package memfs

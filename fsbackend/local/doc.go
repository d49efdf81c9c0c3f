// Package local is the fsbackend for the machine's own file system, the
// default back end (storage.type hdfs with fs.defaultFS file:///, or local).
//
// Files are created with O_EXCL. Writer.Sync is fdatasync; the first Sync
// of a file also syncs its directory, so a file's existence is durable no
// later than its first successful Sync (records a caller acknowledges
// after a Sync of a fresh log segment survive a power cut). That costs one
// directory sync per file that is synced, none per later Sync; a file
// that is only closed has its directory synced by Close instead, as
// before, so it costs nothing more. Directories Create (or Rename) makes
// on the way are synced into their parents before Create returns, and a
// directory that already existed is synced into its parent once per FS,
// since whoever made it may not have synced it yet. Close syncs the file
// (and its directory entry, if no Sync did) before returning, so a closed
// file survives a power cut. Rename is rename(2) followed by a directory
// sync.
//
// FS is an fsbackend.DirSyncer: its Deferred view does the same without
// any of these syncs (a writer's Sync is fdatasync alone, its Close syncs
// nothing, Rename and Remove sync no directory and Remove leaves emptied
// directories), and SyncDir syncs one directory, so that a caller who
// renames, creates and removes several files in one directory pays for
// one directory sync.
package local

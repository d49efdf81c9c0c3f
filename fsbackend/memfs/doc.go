// Package memfs is an in-memory fsbackend.FS that can simulate a crash, in
// the manner of pebble's crash-simulating MemFS: every file keeps its
// durable bytes (as of the writer's last Sync or Close) apart from the
// bytes written since, and Crash drops everything not durable.
//
// A file created and never synced or closed does not survive a Crash: its
// directory entry becomes durable with its first Sync or Close (the local
// back end syncs the directory when it closes a file). Remove and Rename
// are durable when they return.
package memfs

// Package boltstore is a map store on one embedded bbolt file, for
// single-member deployments (map-store properties `type: bbolt`, `path`).
//
// Layout: one top-level bucket per map, holding one sub-bucket per
// partition (named by the partition number, 4 bytes big endian), so that
// loading a partition reads only its own keys. A value is stored as
// uvarint epoch, uvarint seq, then the value bytes.
//
// Several maps may share one file: opening the same path twice in one
// process shares one *bolt.DB (reference counted), since bbolt's flock is
// per open file. Another process holding the file makes Open fail with an
// error matching mapstore.ErrLocked, after Options.Timeout.
//
// Writes go through bolt.DB.Batch: concurrent Store calls share one commit
// and its fdatasync; a call returns once its transaction committed.
package boltstore

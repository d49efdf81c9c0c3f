// Package local is the fsbackend for the machine's own file system, the
// default back end (storage.type hdfs with fs.defaultFS file:///, or local).
//
// Files are created with O_EXCL; Writer.Sync is fdatasync; Close syncs the
// file and its directory before returning, so a closed file survives a
// power cut. Rename is rename(2) followed by a directory sync.
package local

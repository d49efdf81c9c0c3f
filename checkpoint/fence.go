package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// ErrFenced: Options.Fence refused a store or delete (for the storage a
// stowage.Node opens: its cluster's lease on the checkpoint namespace is
// not known to be renewed, and another cluster may take the namespace
// over). Nothing was written; the error also wraps what Fence returned
// (stowage.ErrNamespaceLeaseLost for a Node's storage).
var ErrFenced = errors.New("stowage/checkpoint: checkpoint storage refuses writes while its namespace lease is not known to be held")

// LeaseRecords is the directory below a namespace that holds the records
// of the namespace lease (package fsbackend/nslease) of the clusters that
// write it. Its name holds "..", which no job id may, so it is never taken
// for a job's directory, and listings and inspection skip it.
const LeaseRecords = "..stowage-lease"

// fenced asks Options.Fence before op changes name (relative to the
// namespace): nil when the storage has no fence or it admits the write.
func (s *FileStorage) fenced(op, name string) error {
	if s.fence == nil {
		return nil
	}
	if err := s.fence(); err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrFenced, op, s.ns+name, err)
	}
	return nil
}

// NamespaceDir returns the FS directory of a checkpoint namespace as Open
// takes it ("/seatunnel/checkpoint/" is "seatunnel/checkpoint"; "" for
// the root), or the error Open gives for it: where a caller keeps the
// namespace's lease (LeaseRecords below it).
func NamespaceDir(namespace string) (string, error) {
	_, dir, err := cleanNamespace(namespace)
	return dir, err
}

// BackendProperties returns the fsbackend properties the built-in factory
// registered as name opens its back end with (for hdfs the plugin-config
// itself, for localfile with fs.defaultFS file:///), and false for any
// other factory, whose storage is its own.
func BackendProperties(name string, props fsbackend.Properties) (fsbackend.Properties, bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case StorageHDFS:
		return props, true
	case StorageLocalFile:
		return localFileProperties(props), true
	}
	return nil, false
}

// localFileProperties is props with the local disk as the back end.
func localFileProperties(props fsbackend.Properties) fsbackend.Properties {
	out := make(fsbackend.Properties, len(props)+2)
	maps.Copy(out, props)
	out["storage.type"] = "hdfs"
	out["fs.defaultFS"] = "file:///"
	return out
}

package dmap

import (
	"errors"

	"github.com/stowage/stowage/partition"
)

// errMoved says partition p is served elsewhere (or nowhere yet); the
// caller routes again with the current table.
func errMoved(p int) error { return partition.MovedError{Partition: p} }

func isMoved(err error) bool {
	var m partition.MovedError
	return errors.As(err, &m)
}

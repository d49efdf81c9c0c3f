package checkpoint

import (
	"fmt"
)

// Damage describes one checkpoint file that does not check out. It is
// what Options.OnDamage receives, what a CorruptError carries and what a
// verify Report lists.
type Damage struct {
	Job          string `json:"job"`
	Pipeline     int    `json:"pipeline"`
	CheckpointID int64  `json:"checkpoint_id"`
	// File is the file's name below the storage root, namespace included
	// (e.g. "/seatunnel/checkpoint/42/p0000000001-c0000000000000000007.ckpt").
	File string `json:"file"`
	// Offset is the byte offset at which the first problem was found.
	Offset int64 `json:"offset"`
	// Reason says what was wrong, for operators.
	Reason string `json:"reason"`
}

// CorruptError is returned when a checkpoint file exists but is damaged.
// It matches ErrCorrupt with errors.Is.
type CorruptError struct {
	Damage Damage
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("stowage/checkpoint: checkpoint file %s is damaged at offset %d: %s", e.Damage.File, e.Damage.Offset, e.Damage.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

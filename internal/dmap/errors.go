package dmap

import "errors"

// Errors of map calls; the root package presents them as its own
// sentinels (stowage.ErrClosed and the others are these values).
var (
	ErrClosed         = errors.New("stowage: node is closed")
	ErrInvalidMapName = errors.New("stowage: invalid map name")
	ErrNoQuorum       = errors.New("stowage: split-brain protection: not enough members")
	ErrIndeterminate  = errors.New("stowage: the partition owner did not answer; the write may or may not have taken effect")
	ErrQueueFull      = errors.New("stowage: write-behind queue full")
)

package main

import (
	"context"
	"errors"
)

// checkpoints inspects checkpoint storage.
func (in *inspector) checkpoints(ctx context.Context, args []string) error {
	return errors.New("checkpoints: checkpoint storage inspection is not available in this build")
}

package stowage

import (
	"context"
	"log/slog"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
)

// OpenCheckpointStorage builds the checkpoint storage that
// seatunnel.engine.checkpoint.storage describes: the registered factory
// named by its type (hdfs, or the deprecated localfile), with the
// plugin-config namespace, max-retained and back-end keys.
func OpenCheckpointStorage(ctx context.Context, cfg *config.Config, log *slog.Logger) (checkpoint.Storage, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	if log == nil {
		log = slog.Default()
	}
	s := cfg.Engine.Checkpoint.Storage
	return checkpoint.New(ctx, s.Type, checkpoint.FactoryOptions{
		Namespace:   s.Namespace,
		MaxRetained: s.MaxRetained,
		Properties:  s.PluginConfig,
		Logger:      log,
	})
}

package stowage

import (
	"context"
	"log/slog"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/internal/logscrub"
)

// OpenCheckpointStorage builds the checkpoint storage that
// seatunnel.engine.checkpoint.storage describes: the factory registered
// under its type (hdfs, the deprecated localfile, or one registered with
// checkpoint.Register), given the plugin-config namespace, max-retained
// and the whole plugin-config. config accepts any well-formed type; a type
// no factory is registered for fails here with an error wrapping
// checkpoint.ErrUnknownStorage that names the key
// seatunnel.engine.checkpoint.storage.type, the value and the registered
// names.
func OpenCheckpointStorage(ctx context.Context, cfg *config.Config, log *slog.Logger) (checkpoint.Storage, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	if log == nil {
		log = slog.Default()
	}
	log = logscrub.Logger(log)
	s := cfg.Engine.Checkpoint.Storage
	return checkpoint.New(ctx, s.Type, checkpoint.FactoryOptions{
		Namespace:   s.Namespace,
		MaxRetained: s.MaxRetained,
		Properties:  s.PluginConfig,
		Logger:      log,
	})
}

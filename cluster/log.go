package cluster

import (
	"bytes"
	"context"
	"log/slog"
)

// logWriter turns memberlist's "[LEVEL] memberlist: message" lines into
// slog records.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	level := slog.LevelInfo
	for _, l := range []struct {
		tag   string
		level slog.Level
	}{{"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo}, {"[WARN]", slog.LevelWarn}, {"[ERR]", slog.LevelError}} {
		if bytes.HasPrefix(line, []byte(l.tag)) {
			level = l.level
			line = bytes.TrimSpace(line[len(l.tag):])
			break
		}
	}
	w.l.Log(context.Background(), level, string(line), "component", "memberlist")
	return len(p), nil
}

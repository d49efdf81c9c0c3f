package cluster

import (
	"bytes"
	"context"
	"log/slog"
)

// logWriter turns memberlist's "[LEVEL] memberlist: message" lines into
// slog records, and tells suspect of each member memberlist's probe
// suspects: memberlist says so nowhere else.
type logWriter struct {
	l       *slog.Logger
	suspect func(id string)
}

// memberlist's line when a probe of a member got no acknowledgement.
var (
	suspectPrefix = []byte("memberlist: Suspect ")
	suspectSuffix = []byte(" has failed, no acks received")
)

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
	if w.suspect != nil && bytes.HasPrefix(line, suspectPrefix) && bytes.HasSuffix(line, suspectSuffix) {
		w.suspect(string(line[len(suspectPrefix) : len(line)-len(suspectSuffix)]))
	}
	w.l.Log(context.Background(), level, string(line), "component", "memberlist")
	return len(p), nil
}

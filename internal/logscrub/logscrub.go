// Package logscrub keeps the server's file-system layout out of what
// stowage says to others: error answers and log lines at Info and above
// name a file by its last elements only ("…/log/0003.log"), not by the
// absolute path where the server keeps its data.
package logscrub

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

// absPath matches an absolute path inside a text: at its start, or after
// a space, a quote, an opening parenthesis or an equals sign (the forms
// os.PathError and slog's text output give it).
var absPath = regexp.MustCompile(`(^|[\s"'(=])/[^\s"':,)]+`)

// Keep is how many trailing elements of a path Paths leaves: enough to
// name the file and the folder it is in.
const Keep = 2

// Paths replaces every absolute path in msg by its last Keep elements
// behind "…/".
func Paths(msg string) string {
	if !strings.Contains(msg, "/") {
		return msg
	}
	return absPath.ReplaceAllStringFunc(msg, func(m string) string {
		lead := ""
		if m[0] != '/' {
			lead, m = m[:1], m[1:]
		}
		parts := strings.Split(strings.Trim(m, "/"), "/")
		if len(parts) > Keep {
			parts = parts[len(parts)-Keep:]
		}
		return lead + "…/" + strings.Join(parts, "/")
	})
}

// Handler wraps h so that every record at slog.LevelInfo or above has
// the absolute paths in its message, its string and error attributes and
// their groups replaced by Paths. Debug records pass unchanged: debug
// output is for the operator at the machine.
func Handler(h slog.Handler) slog.Handler {
	if s, ok := h.(handler); ok {
		return s
	}
	return handler{h: h}
}

// Logger returns a logger whose handler is Handler(l.Handler()).
func Logger(l *slog.Logger) *slog.Logger {
	return slog.New(Handler(l.Handler()))
}

type handler struct{ h slog.Handler }

func (s handler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelInfo {
		return s.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, Paths(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return s.h.Handle(ctx, out)
}

// WithAttrs scrubs the attributes now: they are logged with records of
// any level, and a debug line naming a path in them is the lesser loss.
func (s handler) WithAttrs(as []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(as))
	for i, a := range as {
		scrubbed[i] = attr(a)
	}
	return handler{h: s.h.WithAttrs(scrubbed)}
}

func (s handler) WithGroup(name string) slog.Handler { return handler{h: s.h.WithGroup(name)} }

// attr returns a with the paths in its string value, error value or group
// members scrubbed.
func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Paths(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, m := range g {
			out[i] = attr(m)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			return slog.String(a.Key, Paths(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

package main

import (
	"io"
	"log/slog"
)

// quietLogger drops the library's logs; inspect reports damage itself.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

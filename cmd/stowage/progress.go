package main

// The progress bar of inspect's long scans, shown on a terminal only.

import (
	"context"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/stowage/stowage/mapstore/filestore"
)

// bar returns a progress function that draws a bar on stderr, or nil
// when the output is JSON or stderr is not a terminal.
func (in *inspector) bar(what string) func(done, total int) {
	return in.newBar(what).progress()
}

// progressBar is one bar of bar and scan, drawn on stderr. The total may
// change between calls (it grows as a scan learns more); a bar that
// reached its total and then learns of more work starts again. It is not
// safe for concurrent use: the scans that report to it do so one call at
// a time. A nil *progressBar (no terminal, or --json) draws nothing.
type progressBar struct {
	w    io.Writer
	what string
	b    *progressbar.ProgressBar
	max  int
}

// newBar returns a bar on stderr, or nil when the output is JSON or
// stderr is not a terminal.
func (in *inspector) newBar(what string) *progressBar {
	if in.json || !isTerminal(in.errw) {
		return nil
	}
	return &progressBar{w: in.errw, what: what}
}

// progress returns set, or nil for a nil bar, for the scans that skip
// the work of reporting when given none.
func (p *progressBar) progress() func(done, total int) {
	if p == nil {
		return nil
	}
	return p.set
}

func (p *progressBar) set(done, total int) {
	if p == nil || total <= 0 {
		return
	}
	if p.b == nil || (p.b.IsFinished() && done < total) {
		p.b = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(p.what), progressbar.OptionClearOnFinish())
		p.max = total
	}
	if total != p.max {
		p.b.ChangeMax(total)
		p.max = total
	}
	_ = p.b.Set(done)
}

// clear removes an unfinished bar, so that what is printed next starts
// on a clean line.
func (p *progressBar) clear() {
	if p != nil && p.b != nil && !p.b.IsFinished() {
		_ = p.b.Clear()
	}
}

// scan returns ctx carrying a progress bar for the file map store's long
// scans (opening a map, reading every entry, compacting), and a function
// that clears the bar. Without a terminal, or with --json, ctx is
// returned as it is.
func (in *inspector) scan(ctx context.Context, what string) (context.Context, func()) {
	p := in.newBar(what)
	if p == nil {
		return ctx, func() {}
	}
	return filestore.WithProgress(ctx, p.set), p.clear
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

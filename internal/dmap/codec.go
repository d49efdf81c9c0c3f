package dmap

import (
	"context"
	"errors"
	"fmt"

	"github.com/stowage/stowage/mapstore"
)

// ErrCodecMismatch: a persisted map was opened with codecs other than
// those its data was written with.
var ErrCodecMismatch = errors.New("stowage: the map's data was written with other codecs")

// CheckCodec compares the codecs name of a handle with the name its
// persisted map recorded, and records it when none was: a map whose
// store records none (memory maps, stores without mapstore.CodecRecorder)
// is not checked. It holds the map here.
func (m *Map) CheckCodec(ctx context.Context, name string) error {
	c, err := m.writer(ctx)
	if err != nil {
		return err
	}
	rec, ok := c.store.(mapstore.CodecRecorder)
	if !ok {
		return nil
	}
	// A recorded name never changes: a match is checked once per held
	// map, not at every GetMap.
	if _, ok := c.codecOK.Load(name); ok {
		return nil
	}
	got, err := rec.RecordedCodec(ctx)
	if err != nil {
		return fmt.Errorf("stowage: map %q: %w", m.name, err)
	}
	switch got {
	case name:
		c.codecOK.Store(name, true)
		return nil
	case "":
		if err := rec.RecordCodec(ctx, name); err != nil {
			return err
		}
		c.codecOK.Store(name, true)
		return nil
	}
	return fmt.Errorf("%w: map %q holds data written with codecs %q, and was opened with %q", ErrCodecMismatch, m.name, got, name)
}

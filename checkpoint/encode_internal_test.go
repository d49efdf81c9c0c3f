package checkpoint

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// The frames of a state do not copy it: the chunks are the caller's
// slices, and writing the pieces in order writes the file.
func TestFramesLeaveTheStateInPlace(t *testing.T) {
	withChunkSize(t, 1000)
	state := bytes.Repeat([]byte("0123456789"), 250) // 3 chunks
	st := PipelineState{JobID: "j", PipelineID: 1, CheckpointID: 2, States: state}
	f := frame(st)
	if len(f.pieces) != 2*3+1 {
		t.Fatalf("%d pieces, want a framing piece before each of 3 chunks and the trailer", len(f.pieces))
	}
	for i, want := range [][]byte{state[:1000], state[1000:2000], state[2000:]} {
		if p := f.pieces[2*i+1]; &p[0] != &want[0] || len(p) != len(want) {
			t.Fatalf("chunk %d is not the caller's slice", i)
		}
	}
	var buf bytes.Buffer
	if err := f.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != f.size {
		t.Fatalf("wrote %d bytes, size says %d", buf.Len(), f.size)
	}
	got, derr := decode(buf.Bytes())
	if derr != nil || !bytes.Equal(got.States, state) || got.CheckpointID != 2 {
		t.Fatalf("written frames decode to %v, %v", got.CheckpointID, derr)
	}
	if e := frame(PipelineState{JobID: "j"}); len(e.pieces) != 1 {
		t.Fatalf("an empty state has %d pieces, want one (header and trailer)", len(e.pieces))
	}
}

// readBack catches a file that is short, long, or differs in its header
// or trailer frame.
func TestReadBack(t *testing.T) {
	ctx := context.Background()
	created := time.Unix(1700000000, 0)
	st := PipelineState{JobID: "j", PipelineID: 1, CheckpointID: 2, States: bytes.Repeat([]byte("state "), 1000), Created: created}
	f := frame(st)
	good := encode(st)
	other := encode(PipelineState{JobID: "j", PipelineID: 1, CheckpointID: 3, States: st.States, Created: created})
	flip := func(at int) []byte { b := bytes.Clone(good); b[at] ^= 1; return b }
	for _, tc := range []struct {
		name string
		file []byte
		want bool
	}{
		{"as written", good, true},
		{"torn", good[:len(good)-100], false},
		{"longer", append(bytes.Clone(good), 0), false},
		{"header byte flipped", flip(20), false},
		{"trailer byte flipped", flip(len(good) - 3), false},
		{"another checkpoint's file", other, false},
	} {
		mem := memfs.New()
		if err := fsbackend.WriteFile(ctx, mem, "f", tc.file); err != nil {
			t.Fatal(err)
		}
		if got, err := f.readBack(ctx, mem, "f"); err != nil || got != tc.want {
			t.Errorf("%s: readBack = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := f.readBack(ctx, memfs.New(), "missing"); err == nil {
		t.Error("readBack of a missing file gave no error")
	}
}

package checkpoint

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stowage/stowage/serde/record"
)

func withChunkSize(t *testing.T, n int) {
	old := chunkSize
	chunkSize = n
	t.Cleanup(func() { chunkSize = old })
}

func TestEncodeChunksLargeStates(t *testing.T) {
	withChunkSize(t, 1000)
	state := make([]byte, 10_500)
	for i := range state {
		state[i] = byte(i * 7)
	}
	st := PipelineState{JobID: "j", PipelineID: 3, CheckpointID: 9, States: state, Created: time.Unix(1700000000, 5)}
	b := encode(st)
	var types []byte
	var offs []int // start of each frame
	for off := 0; off < len(b); {
		f, n, err := record.Decode(b[off:])
		if err != nil {
			t.Fatalf("frame at %d: %v", off, err)
		}
		types = append(types, f.Type)
		offs = append(offs, off)
		off += n
	}
	if want := "H" + string(bytes.Repeat([]byte("S"), 11)) + "E"; string(types) != want {
		t.Fatalf("frames %q, want %q", types, want)
	}
	got, derr := decode(b)
	if derr != nil {
		t.Fatal(derr)
	}
	if !bytes.Equal(got.States, state) || got.JobID != "j" || got.PipelineID != 3 || got.CheckpointID != 9 || !got.Created.Equal(st.Created) {
		t.Fatalf("round trip lost data: %+v", got)
	}
	// Damage in the 5th chunk is located at that chunk.
	fifth := offs[5]
	bad := bytes.Clone(b)
	bad[fifth+record.HeaderSize+10] ^= 1
	_, derr = decode(bad)
	if derr == nil || derr.Offset != int64(fifth) || !errors.Is(derr, record.ErrChecksum) {
		t.Fatalf("damage in chunk 5: %v, want offset %d checksum", derr, fifth)
	}
	// Whole frames missing (chunks 4..11 dropped, trailer kept) or
	// swapped are caught although every remaining frame checks out.
	trailer := offs[len(offs)-1]
	cut := append(bytes.Clone(b[:offs[4]]), b[trailer:]...)
	if _, derr := decode(cut); derr == nil {
		t.Fatal("a file with chunks missing decoded")
	}
	swapped := append(append(append(bytes.Clone(b[:offs[1]]), b[offs[2]:offs[3]]...), b[offs[1]:offs[2]]...), b[offs[3]:]...)
	if _, derr := decode(swapped); derr == nil || !errors.Is(derr, record.ErrChecksum) {
		t.Fatalf("a file with two chunks swapped: %v, want a state checksum mismatch", derr)
	}
}

func TestDecodeRejectsEveryTruncation(t *testing.T) {
	withChunkSize(t, 64)
	b := encode(PipelineState{JobID: "j", PipelineID: 1, CheckpointID: 1, States: bytes.Repeat([]byte("abc"), 100)})
	for n := 0; n < len(b); n++ {
		if _, derr := decode(b[:n]); derr == nil {
			t.Fatalf("file truncated to %d of %d bytes decoded", n, len(b))
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(PipelineState{JobID: "j", PipelineID: 1, CheckpointID: 2, States: []byte("state")}))
	f.Add(encode(PipelineState{JobID: "57743", PipelineID: 0, CheckpointID: 0}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, derr := decode(b) // must never panic
		if derr != nil {
			if derr.Offset < 0 || derr.Offset > int64(len(b)) {
				t.Fatalf("damage offset %d outside a %d-byte file", derr.Offset, len(b))
			}
			return
		}
		// Whatever decodes re-encodes to a file that decodes the same.
		again, derr := decode(encode(st))
		if derr != nil || again.JobID != st.JobID || again.PipelineID != st.PipelineID ||
			again.CheckpointID != st.CheckpointID || !bytes.Equal(again.States, st.States) {
			t.Fatalf("re-encoded checkpoint differs: %v", derr)
		}
	})
}

package record_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stowage/stowage/serde/record"

	goldenpkg "github.com/stowage/stowage/internal/testutil/golden"
)

const goldenDir = "../../testdata/record/"

func TestRoundTrip(t *testing.T) {
	var buf []byte
	type want struct {
		typ     byte
		payload []byte
	}
	var wants []want
	for i, n := range []int{0, 1, 11, 12, 13, 255, 4096, 1 << 20} {
		p := bytes.Repeat([]byte{byte(i), 0xF7, 0x5A}, n/3+1)[:n]
		typ := []byte{0, 'P', 0xFF}[i%3]
		before := len(buf)
		buf = record.Append(buf, typ, p)
		if len(buf)-before != record.Size(n) {
			t.Fatalf("Append of %d bytes grew the buffer by %d, want Size = %d", n, len(buf)-before, record.Size(n))
		}
		wants = append(wants, want{typ, p})
	}
	rest := buf
	for i, w := range wants {
		f, n, err := record.Decode(rest)
		if err != nil {
			t.Fatalf("Decode of frame %d: %v", i, err)
		}
		if f.Type != w.typ || !bytes.Equal(f.Payload, w.payload) || n != record.Size(len(w.payload)) {
			t.Fatalf("frame %d = type %d, %d bytes, n %d; want type %d, %d bytes", i, f.Type, len(f.Payload), n, w.typ, len(w.payload))
		}
		if cap(f.Payload) != len(f.Payload) {
			t.Fatalf("frame %d payload has spare capacity %d: an append could overwrite the next frame", i, cap(f.Payload))
		}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left after the last frame", len(rest))
	}
}

// AppendHeader followed by the payload is byte for byte what Append makes.
func TestAppendHeaderIsAppendWithoutPayload(t *testing.T) {
	for i, n := range []int{0, 1, 12, 4096, 1 << 20} {
		p := bytes.Repeat([]byte{byte(i), 0x5A}, n/2+1)[:n]
		prefix := []byte("before")
		h := record.AppendHeader(bytes.Clone(prefix), 'S', p)
		if len(h) != len(prefix)+record.HeaderSize || !bytes.Equal(h[:len(prefix)], prefix) {
			t.Fatalf("AppendHeader of %d bytes: %d bytes, want the prefix and %d header bytes", n, len(h), record.HeaderSize)
		}
		if want := record.Append(bytes.Clone(prefix), 'S', p); !bytes.Equal(append(h, p...), want) {
			t.Fatalf("AppendHeader + payload of %d bytes differs from Append", n)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("AppendHeader of a payload over MaxPayload did not panic")
		}
	}()
	record.AppendHeader(nil, 'S', make([]byte, record.MaxPayload+1))
}

func TestBeginEndFrameIsAppend(t *testing.T) {
	for i, n := range []int{0, 1, 12, 4096, 1 << 20} {
		p := bytes.Repeat([]byte{byte(i), 0x5A}, n/2+1)[:n]
		prefix := []byte("before")
		b := record.BeginFrame(bytes.Clone(prefix), 'S')
		b = record.EndFrame(append(b, p...), len(prefix))
		if want := record.Append(bytes.Clone(prefix), 'S', p); !bytes.Equal(b, want) {
			t.Fatalf("BeginFrame + payload + EndFrame of %d bytes differs from Append", n)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("EndFrame of a payload over MaxPayload did not panic")
		}
	}()
	record.EndFrame(record.BeginFrame(nil, 'S')[:record.HeaderSize+record.MaxPayload+1], 0)
}

func TestChecksumIsCastagnoli(t *testing.T) {
	// The CRC-32C check value of "123456789" is 0xE3069283.
	if got := record.Checksum([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("Checksum(123456789) = %#x, want 0xe3069283", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := record.Append(nil, 'P', []byte("payload"))
	edit := func(f func(b []byte)) []byte { b := bytes.Clone(good); f(b); return b }
	setLen := func(n uint32) []byte { return edit(func(b []byte) { binary.LittleEndian.PutUint32(b[4:], n) }) }
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, record.ErrShort},
		{"one byte", good[:1], record.ErrShort},
		{"short header", good[:5], record.ErrShort},
		{"header only", good[:record.HeaderSize], record.ErrShort},
		{"short payload", good[:len(good)-1], record.ErrShort},
		{"magic 0", edit(func(b []byte) { b[0] ^= 0xFF }), record.ErrMagic},
		{"magic 1", edit(func(b []byte) { b[1] ^= 0x01 }), record.ErrMagic},
		{"magic in a short buffer", []byte{0, 0, 0}, record.ErrMagic},
		{"version 0", edit(func(b []byte) { b[2] = 0 }), record.ErrVersion},
		{"version 2", edit(func(b []byte) { b[2] = 2 }), record.ErrVersion},
		{"type byte", edit(func(b []byte) { b[3] ^= 0x01 }), record.ErrChecksum},
		{"payload byte", edit(func(b []byte) { b[len(b)-1] ^= 0x80 }), record.ErrChecksum},
		{"crc byte", edit(func(b []byte) { b[9] ^= 0x10 }), record.ErrChecksum},
		{"length smaller", setLen(3), record.ErrChecksum},
		{"length past the end", setLen(100), record.ErrShort},
		{"length just over the maximum", setLen(record.MaxPayload + 1), record.ErrTooLarge},
		{"length huge", setLen(0xFFFFFFFF), record.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, n, err := record.Decode(tc.b)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode: %v, want %v", err, tc.want)
			}
			if n != 0 || f.Payload != nil || f.Type != 0 {
				t.Fatalf("Decode returned %+v, %d with the error; want zero", f, n)
			}
		})
	}
}

// scan runs a scanner over b, checks the invariants every scan must keep,
// and returns a one-line description: frames by payload, damages by
// offset, length, reason and tail, and End.
func scan(t testing.TB, b []byte) string {
	t.Helper()
	s := record.NewScanner(b)
	var parts []string
	at := int64(0) // frames and damages must tile the buffer in order
	nd := 0
	for s.Next() {
		for _, d := range s.Damages()[nd:] {
			if d.Offset != at {
				t.Fatalf("damage at %d, want it to start at %d", d.Offset, at)
			}
			parts = append(parts, describe(d))
			at += d.Length
		}
		nd = len(s.Damages())
		if s.Offset() != at {
			t.Fatalf("frame at %d, want it at %d", s.Offset(), at)
		}
		fr := s.Frame()
		re := record.Append(nil, fr.Type, fr.Payload)
		if !bytes.Equal(re, b[at:at+int64(len(re))]) {
			t.Fatalf("frame at %d does not re-encode to its own bytes", at)
		}
		parts = append(parts, fmt.Sprintf("frame@%d %c %q", at, fr.Type, fr.Payload))
		at += int64(len(re))
	}
	for _, d := range s.Damages()[nd:] {
		if d.Offset != at || d.Length <= 0 {
			t.Fatalf("damage %+v, want it to start at %d", d, at)
		}
		parts = append(parts, describe(d))
		at += d.Length
	}
	if z := s.ZeroTail(); z > 0 {
		parts = append(parts, fmt.Sprintf("zeros@%d+%d", at, z))
		at += z
	}
	if at != int64(len(b)) {
		t.Fatalf("frames, damages and zeros cover %d bytes of %d", at, len(b))
	}
	for i, d := range s.Damages() {
		if d.Tail != (d.Offset+d.Length == int64(len(b))) || (d.Tail && i != len(s.Damages())-1) {
			t.Fatalf("damage %+v: Tail must mark exactly the damage that ends the buffer", d)
		}
	}
	return strings.Join(append(parts, fmt.Sprintf("end@%d", s.End())), "; ")
}

func describe(d record.Damage) string {
	reason := "?"
	for _, e := range []error{record.ErrShort, record.ErrMagic, record.ErrVersion, record.ErrTooLarge, record.ErrChecksum} {
		if errors.Is(d.Err, e) {
			reason = strings.TrimPrefix(e.Error(), "stowage/record: ")
		}
	}
	tail := ""
	if d.Tail {
		tail = " tail"
	}
	return fmt.Sprintf("damage@%d+%d (%s)%s", d.Offset, d.Length, reason, tail)
}

func frames(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = record.Append(b, 'P', []byte(p))
	}
	return b
}

func TestScanner(t *testing.T) {
	five := frames("a123", "b123", "c123", "d123", "e123")
	fs := record.Size(4) // 16
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(five)) }
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "end@0"},
		{"clean", five, `frame@0 P "a123"; frame@16 P "b123"; frame@32 P "c123"; frame@48 P "d123"; frame@64 P "e123"; end@80`},
		{"flipped payload byte in the middle frame", mod(func(b []byte) []byte { b[2*fs+13] ^= 0x55; return b }),
			`frame@0 P "a123"; frame@16 P "b123"; damage@32+16 (checksum mismatch); frame@48 P "d123"; frame@64 P "e123"; end@80`},
		{"length of the middle frame flipped to a huge value", mod(func(b []byte) []byte { b[2*fs+7] ^= 0xFF; return b }),
			`frame@0 P "a123"; frame@16 P "b123"; damage@32+16 (frame length exceeds the maximum); frame@48 P "d123"; frame@64 P "e123"; end@80`},
		{"length of the middle frame grown within the buffer", mod(func(b []byte) []byte { b[2*fs+4] = 20; return b }),
			`frame@0 P "a123"; frame@16 P "b123"; damage@32+16 (checksum mismatch); frame@48 P "d123"; frame@64 P "e123"; end@80`},
		{"magic of the first frame", mod(func(b []byte) []byte { b[0] = 0; return b }),
			`damage@0+16 (bad magic); frame@16 P "b123"; frame@32 P "c123"; frame@48 P "d123"; frame@64 P "e123"; end@80`},
		{"garbage prefix", append([]byte("\xF7\x5A\x01garbage"), five...),
			`damage@0+10 (frame length exceeds the maximum); frame@10 P "a123"; frame@26 P "b123"; frame@42 P "c123"; frame@58 P "d123"; frame@74 P "e123"; end@90`},
		{"garbage between frames", append(append(frames("a123"), "\x00\xF7zz"...), frames("b123")...),
			`frame@0 P "a123"; damage@16+4 (bad magic); frame@20 P "b123"; end@36`},
		{"torn tail", five[:4*fs+7],
			`frame@0 P "a123"; frame@16 P "b123"; frame@32 P "c123"; frame@48 P "d123"; damage@64+7 (frame runs past the end of the data) tail; end@64`},
		// Zeros written ahead of the frames and left by a writer that
		// died: the end, not damage.
		{"zeroed tail", append(bytes.Clone(five[:2*fs]), make([]byte, 30)...),
			`frame@0 P "a123"; frame@16 P "b123"; zeros@32+30; end@32`},
		{"only zeros", make([]byte, 40), `zeros@0+40; end@0`},
		{"torn frame before zeros", append(bytes.Clone(five[:2*fs+9]), make([]byte, 30)...),
			`frame@0 P "a123"; frame@16 P "b123"; damage@32+39 (checksum mismatch) tail; end@32`},
		{"zeros between frames", append(append(bytes.Clone(five[:fs]), make([]byte, 20)...), five[fs:2*fs]...),
			`frame@0 P "a123"; damage@16+20 (bad magic); frame@36 P "b123"; end@52`},
		{"only garbage", []byte("not a frame at all"), `damage@0+18 (bad magic) tail; end@0`},
		{"two damaged frames in a row", mod(func(b []byte) []byte { b[fs+13] ^= 1; b[2*fs+13] ^= 1; return b }),
			`frame@0 P "a123"; damage@16+32 (checksum mismatch); frame@48 P "d123"; frame@64 P "e123"; end@80`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scan(t, tc.b); got != tc.want {
				t.Fatalf("scan:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestScannerTornAtEveryOffset cuts the last frame at every byte: the
// frames before it always come back and the rest is a tail at their end.
func TestScannerTornAtEveryOffset(t *testing.T) {
	b := frames("first", "second", "third-and-last")
	last := int64(record.Size(5) + record.Size(6))
	for cut := last + 1; cut < int64(len(b)); cut++ {
		s := record.NewScanner(b[:cut])
		n := 0
		for s.Next() {
			n++
		}
		d := s.Damages()
		if n != 2 || len(d) != 1 || !d[0].Tail || d[0].Offset != last || s.End() != last {
			t.Fatalf("cut at %d: %d frames, damages %+v, End %d; want 2 frames and a tail at %d", cut, n, d, s.End(), last)
		}
	}
}

// golden checks got against the golden file name under goldenDir.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Check(t, goldenDir+name, got, "a format change")
}

func goldenFrames() []byte {
	var b []byte
	b = record.Append(b, 'H', []byte("header"))
	b = record.Append(b, 'P', []byte{})
	b = record.Append(b, 'P', bytes.Repeat([]byte{0xF7, 0x5A}, 20))
	return record.Append(b, 'T', []byte("end"))
}

// damagedFrames is goldenFrames with a flipped payload byte in the second
// non-empty frame and a torn copy of the last frame appended.
func damagedFrames() []byte {
	b := goldenFrames()
	b[record.Size(6)+record.Size(0)+record.HeaderSize+7] ^= 0x01
	return append(b, record.Append(nil, 'T', []byte("torn"))[:10]...)
}

// The frame format is frozen: a change shows as a diff of these files.
func TestGolden(t *testing.T) {
	golden(t, "frames.golden", goldenFrames())
	golden(t, "damaged.golden", damagedFrames())
	// What the scanner makes of them is golden too.
	golden(t, "frames.scan.golden", []byte(scan(t, goldenFrames())+"\n"))
	golden(t, "damaged.scan.golden", []byte(scan(t, damagedFrames())+"\n"))
}

func FuzzScanner(f *testing.F) {
	f.Add(goldenFrames())
	f.Add(damagedFrames())
	f.Add([]byte{0xF7, 0x5A, 1, 'P', 0xFF, 0xFF, 0xFF, 0x7F})
	f.Add(frames("a", "b")[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		scan(t, b) // never panics; frames re-encode; frames and damage tile the input
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(goldenFrames())
	f.Add(record.Append(nil, 0, nil))
	f.Add([]byte{0xF7, 0x5A, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := record.Decode(b)
		if err != nil {
			if n != 0 || fr.Payload != nil {
				t.Fatalf("Decode error %v with n %d, payload %d bytes", err, n, len(fr.Payload))
			}
			known := false
			for _, e := range []error{record.ErrShort, record.ErrMagic, record.ErrVersion, record.ErrTooLarge, record.ErrChecksum} {
				known = known || errors.Is(err, e)
			}
			if !known {
				t.Fatalf("Decode error %v matches no sentinel", err)
			}
			return
		}
		if n != record.Size(len(fr.Payload)) || n > len(b) {
			t.Fatalf("n = %d for a payload of %d bytes in %d", n, len(fr.Payload), len(b))
		}
		if crc := binary.LittleEndian.Uint32(b[8:12]); crc != record.Checksum(append(bytes.Clone(b[:8]), fr.Payload...)) {
			t.Fatalf("Decode returned a frame whose CRC does not check")
		}
		if !bytes.Equal(record.Append(nil, fr.Type, fr.Payload), b[:n]) {
			t.Fatalf("frame does not re-encode to its bytes")
		}
	})
}

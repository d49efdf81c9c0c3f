package record_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/stowage/stowage/serde/record"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden() []byte {
	var b []byte
	b = record.Append(b, 'H', []byte("header"))
	b = record.Append(b, 'P', []byte{})
	b = record.Append(b, 'P', bytes.Repeat([]byte{0xF7, 0x5A}, 20))
	return record.Append(b, 'T', []byte("end"))
}

// The frame format is frozen: a change shows as a diff of this file.
func TestGolden(t *testing.T) {
	const path = "../../testdata/record/frames.golden"
	got := golden()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frames differ from %s:\n got %x\nwant %x", path, got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := record.Append(nil, 'P', []byte("payload"))
	flip := func(i int) []byte { b := append([]byte(nil), good...); b[i] ^= 0xFF; return b }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short header", good[:5], record.ErrShort},
		{"short payload", good[:len(good)-1], record.ErrShort},
		{"magic", flip(0), record.ErrMagic},
		{"version", flip(2), record.ErrVersion},
		{"payload byte", flip(len(good) - 1), record.ErrChecksum},
		{"type byte", flip(3), record.ErrChecksum},
		{"huge length", func() []byte { b := append([]byte(nil), good...); b[7] = 0x7F; return b }(), record.ErrTooLarge},
	}
	for _, tc := range cases {
		if _, _, err := record.Decode(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	f, n, err := record.Decode(good)
	if err != nil || n != len(good) || f.Type != 'P' || string(f.Payload) != "payload" {
		t.Fatalf("Decode = %+v, %d, %v", f, n, err)
	}
}

func TestScannerContainsDamage(t *testing.T) {
	var b []byte
	for i := 0; i < 5; i++ {
		b = record.Append(b, 'P', []byte{byte('a' + i), 1, 2, 3})
	}
	frame := record.Size(4)
	b[2*frame+record.HeaderSize] ^= 0x55                          // damage the third frame's payload
	b = append(b, record.Append(nil, 'P', []byte("torn"))[:9]...) // and a torn tail
	sc := record.NewScanner(b)
	var got []byte
	for sc.Next() {
		got = append(got, sc.Frame().Payload[0])
	}
	if string(got) != "abde" {
		t.Fatalf("frames read %q, want abde (c damaged)", got)
	}
	ds := sc.Damages()
	if len(ds) != 2 || ds[0].Offset != int64(2*frame) || ds[0].Tail || !ds[1].Tail {
		t.Fatalf("damages = %+v", ds)
	}
	if sc.End() != int64(5*frame) {
		t.Fatalf("End = %d, want %d", sc.End(), 5*frame)
	}
}

func FuzzScanner(f *testing.F) {
	f.Add(golden())
	f.Add([]byte{0xF7, 0x5A, 1, 'P', 0xFF, 0xFF, 0xFF, 0x7F})
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := record.NewScanner(b)
		for sc.Next() {
			fr := sc.Frame()
			// Only frames whose checksum holds come out.
			re := record.Append(nil, fr.Type, fr.Payload)
			if !bytes.Equal(re, b[sc.Offset():sc.Offset()+int64(len(re))]) {
				t.Fatalf("frame at %d does not re-encode to its bytes", sc.Offset())
			}
		}
		for _, d := range sc.Damages() {
			if d.Offset < 0 || d.Length <= 0 || d.Offset+d.Length > int64(len(b)) {
				t.Fatalf("damage out of bounds: %+v (len %d)", d, len(b))
			}
		}
	})
}

package record_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/stowage/stowage/serde/record"
)

// goldenFields is one of each field kind, with the edge values.
func goldenFields() []byte {
	var b []byte
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 35, math.MaxUint64} {
		b = record.AppendUvarint(b, v)
	}
	for _, v := range []int64{0, -1, 1, -3, math.MinInt64, math.MaxInt64} {
		b = record.AppendVarint(b, v)
	}
	b = record.AppendUint32(b, 0xDEADBEEF)
	b = record.AppendBytes(b, nil)
	b = record.AppendBytes(b, []byte("ab"))
	return record.AppendBytes(b, bytes.Repeat([]byte{0xF7}, 130))
}

// The field encodings are frozen like the frame: a change shows as a diff.
func TestFieldsGolden(t *testing.T) {
	golden(t, "fields.golden", goldenFields())
}

// The examples of the package doc.
func TestFieldsDocExamples(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []byte
	}{
		{"300 as uvarint", record.AppendUvarint(nil, 300), []byte{0xAC, 0x02}},
		{"-3 as varint", record.AppendVarint(nil, -3), []byte{0x05}},
		{"0xDEADBEEF as uint32", record.AppendUint32(nil, 0xDEADBEEF), []byte{0xEF, 0xBE, 0xAD, 0xDE}},
		{`"ab" as bytes`, record.AppendBytes(nil, []byte("ab")), []byte{0x02, 'a', 'b'}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s = % X, want % X", tc.name, tc.got, tc.want)
		}
	}
}

func TestReaderRoundTrip(t *testing.T) {
	r := record.NewReader(goldenFields())
	for _, want := range []uint64{0, 1, 127, 128, 300, 1 << 35, math.MaxUint64} {
		if got := r.Uvarint(); got != want {
			t.Fatalf("Uvarint = %d, want %d", got, want)
		}
	}
	for _, want := range []int64{0, -1, 1, -3, math.MinInt64, math.MaxInt64} {
		if got := r.Varint(); got != want {
			t.Fatalf("Varint = %d, want %d", got, want)
		}
	}
	if got := r.Uint32(); got != 0xDEADBEEF {
		t.Fatalf("Uint32 = %#x, want 0xdeadbeef", got)
	}
	if got := r.Bytes(); got == nil || len(got) != 0 {
		t.Fatalf("empty Bytes = %v (nil %t), want empty and not nil", got, got == nil)
	}
	if got := r.Bytes(); string(got) != "ab" || cap(got) != 2 {
		t.Fatalf("Bytes = %q with capacity %d, want \"ab\" with no spare capacity", got, cap(got))
	}
	if got := r.Bytes(); !bytes.Equal(got, bytes.Repeat([]byte{0xF7}, 130)) {
		t.Fatalf("Bytes = % X, want 130 bytes F7", got)
	}
	if r.Len() != 0 || r.Err() != nil {
		t.Fatalf("after the last field: Len %d, Err %v; want 0, nil", r.Len(), r.Err())
	}
	if rest := r.Rest(); rest == nil || len(rest) != 0 || r.Err() != nil {
		t.Fatalf("Rest at the end = %v, Err %v; want empty, nil", rest, r.Err())
	}
}

func TestReaderRest(t *testing.T) {
	payload := append(record.AppendBytes(nil, []byte("key")), "value"...)
	r := record.NewReader(payload)
	if k := r.Bytes(); string(k) != "key" {
		t.Fatalf("Bytes = %q, want key", k)
	}
	if v := r.Rest(); string(v) != "value" || r.Len() != 0 || r.Err() != nil {
		t.Fatalf("Rest = %q, then Len %d, Err %v; want value, 0, nil", v, r.Len(), r.Err())
	}
}

// Each malformed field fails the reader, which then returns zero values.
func TestReaderFails(t *testing.T) {
	maxUvarint := record.AppendUvarint(nil, math.MaxUint64) // FF x9, 01
	for _, tc := range []struct {
		name    string
		payload []byte
		read    func(r *record.Reader) any
	}{
		{"uvarint in empty payload", nil, func(r *record.Reader) any { return r.Uvarint() }},
		{"uvarint cut short", []byte{0x80}, func(r *record.Reader) any { return r.Uvarint() }},
		{"uvarint over 64 bits in the 10th byte", append(bytes.Clone(maxUvarint[:9]), 0x02), func(r *record.Reader) any { return r.Uvarint() }},
		{"uvarint of 11 bytes", append(bytes.Repeat([]byte{0x80}, 10), 0x00), func(r *record.Reader) any { return r.Uvarint() }},
		{"varint cut short", []byte{0xFF, 0xFF}, func(r *record.Reader) any { return r.Varint() }},
		{"uint32 of 3 bytes", []byte{1, 2, 3}, func(r *record.Reader) any { return r.Uint32() }},
		{"bytes longer than the payload", []byte{0x04, 'a', 'b', 'c'}, func(r *record.Reader) any { return r.Bytes() }},
		{"bytes length cut short", []byte{0x81}, func(r *record.Reader) any { return r.Bytes() }},
		{"bytes length beyond int", append(bytes.Clone(maxUvarint), 'x'), func(r *record.Reader) any { return r.Bytes() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.NewReader(tc.payload)
			got := tc.read(&r)
			if !reflect.ValueOf(got).IsZero() {
				t.Fatalf("failed read returned %v, want the zero value", got)
			}
			if !errors.Is(r.Err(), record.ErrField) {
				t.Fatalf("Err = %v, want ErrField", r.Err())
			}
			// Sticky: later reads return zero values and the error stays.
			if r.Len() != 0 || r.Uvarint() != 0 || r.Varint() != 0 || r.Uint32() != 0 || r.Bytes() != nil || r.Rest() != nil {
				t.Fatal("a read after the failure returned data")
			}
			if !errors.Is(r.Err(), record.ErrField) {
				t.Fatalf("Err after more reads = %v, want ErrField", r.Err())
			}
		})
	}
}

// The reader accepts exactly what encoding/binary accepts, including
// encodings longer than needed, which the formats' readers always took.
func TestUvarintAgreesWithEncodingBinary(t *testing.T) {
	for _, b := range [][]byte{
		{0x80, 0x00},
		{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01},
		{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00},
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81},
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
		{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02},
		{0x7F, 0xFF},
	} {
		checkUvarint(t, b)
	}
}

// checkUvarint compares Uvarint and Varint on b with encoding/binary's.
func checkUvarint(t *testing.T, b []byte) {
	t.Helper()
	r := record.NewReader(b)
	v := r.Uvarint()
	want, n := binary.Uvarint(b)
	if n <= 0 {
		if r.Err() == nil {
			t.Fatalf("Uvarint(% X) = %d, want a failure", b, v)
		}
	} else if r.Err() != nil || v != want || r.Len() != len(b)-n {
		t.Fatalf("Uvarint(% X) = %d, %d bytes left, %v; want %d, %d bytes left", b, v, r.Len(), r.Err(), want, len(b)-n)
	}
	r = record.NewReader(b)
	sv := r.Varint()
	swant, sn := binary.Varint(b)
	if (sn <= 0) != (r.Err() != nil) || sn > 0 && (sv != swant || r.Len() != len(b)-sn) {
		t.Fatalf("Varint(% X) = %d, %d bytes left, %v; want %d, %d bytes used", b, sv, r.Len(), r.Err(), swant, sn)
	}
}

// FuzzReader reads payload with the reads ops names, following a model
// built on encoding/binary. The reader must never panic, agree with the
// model, return only bytes of the payload without spare capacity, and
// stay failed once it failed.
func FuzzReader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 3, 3, 3}, goldenFields())
	f.Add([]byte{3, 4}, append(record.AppendBytes(nil, []byte("key")), "value"...))
	f.Add([]byte{0}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02})
	f.Add([]byte{3, 0, 2}, []byte{0xFF, 0x01})
	f.Fuzz(func(t *testing.T, ops, payload []byte) {
		checkUvarint(t, payload)
		// The payload sits in a larger buffer: a read past its end would
		// show as bytes that are not the payload's.
		buf := append(bytes.Clone(payload), 0xEE, 0xEE, 0xEE, 0xEE)
		in := buf[:len(payload):len(payload)]
		r := record.NewReader(in)
		off, failed := 0, false // the model
		for _, op := range ops {
			rest := in[off:]
			var got, want []byte // what the op returned, as bytes
			var ok bool
			switch op % 5 {
			case 0:
				v, n := binary.Uvarint(rest)
				got, want, ok = binary.AppendUvarint(nil, r.Uvarint()), binary.AppendUvarint(nil, v), n > 0
				off += max(n, 0)
			case 1:
				v, n := binary.Varint(rest)
				got, want, ok = binary.AppendVarint(nil, r.Varint()), binary.AppendVarint(nil, v), n > 0
				off += max(n, 0)
			case 2:
				ok = len(rest) >= 4
				got = binary.LittleEndian.AppendUint32(nil, r.Uint32())
				want = []byte{0, 0, 0, 0}
				if ok {
					want = rest[:4]
					off += 4
				}
			case 3:
				l, n := binary.Uvarint(rest)
				ok = n > 0 && l <= uint64(len(rest)-n)
				got = r.Bytes()
				if ok {
					want = rest[n : n+int(l)]
					off += n + int(l)
				}
				if (got == nil) == ok || cap(got) != len(got) {
					t.Fatalf("Bytes at %d = %v (nil %t, capacity %d); model ok %t", off, got, got == nil, cap(got), ok)
				}
			case 4:
				ok = true
				got, want = r.Rest(), rest
				off = len(in)
				if failed != (got == nil) {
					t.Fatalf("Rest = %v after failed %t", got, failed)
				}
			}
			if failed || !ok {
				failed, want, off = true, zeroOf(op%5), len(in)
				if op%5 == 3 || op%5 == 4 {
					want = nil
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("op %d = % X, want % X", op%5, got, want)
			}
			if r.Len() != len(in)-off || (r.Err() != nil) != failed {
				t.Fatalf("after op %d: Len %d, Err %v; model %d bytes left, failed %t", op%5, r.Len(), r.Err(), len(in)-off, failed)
			}
			if failed && !errors.Is(r.Err(), record.ErrField) {
				t.Fatalf("Err = %v, want ErrField", r.Err())
			}
		}
		if !bytes.Equal(buf[len(payload):], []byte{0xEE, 0xEE, 0xEE, 0xEE}) || !bytes.Equal(buf[:len(payload)], payload) {
			t.Fatal("the reader wrote to its input")
		}
	})
}

// zeroOf returns the bytes of the zero value read by op.
func zeroOf(op byte) []byte {
	switch op {
	case 0:
		return binary.AppendUvarint(nil, 0)
	case 1:
		return binary.AppendVarint(nil, 0)
	case 2:
		return []byte{0, 0, 0, 0}
	}
	return nil
}

package backup

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stowage/stowage/cluster"
	"github.com/vmihailenco/msgpack/v5"
)

// The same messages with the codec found by reflection, and a field the
// written-out decoder does not know.
type reflectEntry struct {
	K []byte `msgpack:"k"`
	V []byte `msgpack:"v,omitempty"`
	R Ver    `msgpack:"r"`
	D bool   `msgpack:"d,omitempty"`
	X int64  `msgpack:"x,omitempty"`
}

type reflectRecord struct {
	Map    string       `msgpack:"m"`
	P      int          `msgpack:"p"`
	Epoch  uint64       `msgpack:"e"`
	Rec    reflectEntry `msgpack:"r"`
	PrevOK bool         `msgpack:"po,omitempty"`
	Prev   reflectEntry `msgpack:"pv"`
	Comp   uint64       `msgpack:"cp,omitempty"`
	Later  string       `msgpack:"zz,omitempty"` // a field added later
}

func mirror(r Record) reflectRecord {
	return reflectRecord{Map: r.Map, P: r.P, Epoch: r.Epoch, Rec: reflectEntry(r.Rec), PrevOK: r.PrevOK, Prev: reflectEntry(r.Prev), Comp: r.Comp}
}

// TestRecordCodecIsReflections: the written-out codec of Record makes the
// bytes reflection makes, and each reads what the other wrote.
func TestRecordCodecIsReflections(t *testing.T) {
	for _, r := range []Record{
		{},
		{Map: "engine_jobs", P: 270, Epoch: 1 << 40, Rec: Entry{K: []byte("k"), V: bytes.Repeat([]byte{7}, 300), R: Ver{E: 3, S: 1 << 33}, X: -5}},
		{Map: "m", P: 3, Epoch: 9, Rec: Entry{K: []byte("gone"), R: Ver{E: 1, S: 2}, D: true},
			PrevOK: true, Prev: Entry{K: []byte("gone"), V: []byte("old"), R: Ver{E: 1, S: 1}, X: 1 << 62}, Comp: 77},
	} {
		got, err := msgpack.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := msgpack.Marshal(mirror(r))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("record %+v:\n written out %x\n reflection  %x", r, got, want)
		}
		if direct := cluster.Encode(r); !bytes.Equal(direct, want) {
			t.Errorf("record %+v:\n appended   %x\n reflection %x", r, direct, want)
		}
		if len(want) > r.WireSize() {
			t.Errorf("record %+v: %d bytes, WireSize %d", r, len(want), r.WireSize())
		}
		var back reflectRecord
		if err := msgpack.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, mirror(r)) {
			t.Errorf("reflection read %+v (%v), want %+v", back, err, mirror(r))
		}
		m := mirror(r)
		m.Later = "ignored"
		later, _ := msgpack.Marshal(m)
		var dec Record
		if err := msgpack.Unmarshal(later, &dec); err != nil || !reflect.DeepEqual(dec, r) {
			t.Errorf("written-out decoder read %+v (%v), want %+v", dec, err, r)
		}
		var parsed Record
		if err := cluster.Decode(later, &parsed); err != nil || !reflect.DeepEqual(parsed, r) {
			t.Errorf("ParseWire read %+v (%v), want %+v", parsed, err, r)
		}
	}
	// Truncated bytes are an error, not a panic.
	full, _ := msgpack.Marshal(Record{Map: "m", Rec: Entry{K: []byte("k"), V: []byte("v")}})
	for n := range len(full) {
		var dec Record
		if err := msgpack.Unmarshal(full[:n], &dec); err == nil {
			t.Errorf("%d of %d bytes decoded without an error", n, len(full))
		}
		if err := cluster.Decode(full[:n], &dec); !errors.Is(err, cluster.ErrBadMessage) {
			t.Errorf("%d of %d bytes parsed: %v, want ErrBadMessage", n, len(full), err)
		}
	}
}

// TestRecordCodecKnowsEveryField: a field added to Record, Entry or Ver
// must be added to the written-out codec too (wire_record.go), and to the
// mirror types above; this fails until it is.
func TestRecordCodecKnowsEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[Record]():  "m p e r po pv cp",
		reflect.TypeFor[Entry]():   "k v r d x",
		reflect.TypeFor[Ver]():     "e s",
		reflect.TypeFor[codeAns](): "c x",
	} {
		var tags []string
		for f := range typ.Fields() {
			tags = append(tags, strings.Split(f.Tag.Get("msgpack"), ",")[0])
		}
		if got := strings.Join(tags, " "); got != want {
			t.Errorf("%s has the fields %q; the written-out codec knows %q", typ, got, want)
		}
	}
}

// TestCodeAnsCodecIsReflections: the answer to a record, written out,
// makes the bytes reflection makes and reads them back.
func TestCodeAnsCodecIsReflections(t *testing.T) {
	type reflectAns struct {
		Code int    `msgpack:"c"`
		Msg  string `msgpack:"x,omitempty"`
	}
	for _, a := range []codeAns{{}, {Code: codeStale, Msg: "partition 3: the sender is not its owner here"}, {Code: -1}} {
		want, err := msgpack.Marshal(reflectAns(a))
		if err != nil {
			t.Fatal(err)
		}
		if got := cluster.Encode(a); !bytes.Equal(got, want) {
			t.Errorf("answer %+v:\n written out %x\n reflection  %x", a, got, want)
		}
		if len(want) > a.WireSize() {
			t.Errorf("answer %+v: %d bytes, WireSize %d", a, len(want), a.WireSize())
		}
		var back codeAns
		if err := cluster.Decode(want, &back); err != nil || back != a {
			t.Errorf("read %+v (%v), want %+v", back, err, a)
		}
	}
}

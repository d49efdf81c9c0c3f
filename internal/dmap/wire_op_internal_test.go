package dmap

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/vmihailenco/msgpack/v5"
)

// The same messages with the codec found by reflection, and a field the
// written-out decoder does not know.
type reflectOpReq struct {
	Map    string     `msgpack:"m"`
	Kind   int        `msgpack:"o"`
	Key    []byte     `msgpack:"k"`
	Val    []byte     `msgpack:"v,omitempty"`
	Del    bool       `msgpack:"d,omitempty"`
	ExpOK  bool       `msgpack:"xo,omitempty"`
	ExpVer backup.Ver `msgpack:"xv"`
	Owner  string     `msgpack:"lo,omitempty"`
	TTL    int64      `msgpack:"t,omitempty"`
	TTLSet bool       `msgpack:"ts,omitempty"`
	Later  []int      `msgpack:"zz,omitempty"` // a field added later
}

type reflectOpAns struct {
	Code  int        `msgpack:"c"`
	Msg   string     `msgpack:"x,omitempty"`
	Old   []byte     `msgpack:"o,omitempty"`
	Had   bool       `msgpack:"h,omitempty"`
	Wrote bool       `msgpack:"w,omitempty"`
	Ver   backup.Ver `msgpack:"r"`
	Later []int      `msgpack:"zz,omitempty"`
}

// TestOpCodecIsReflections: the written-out codec of a forwarded
// operation and of its answer makes the bytes reflection makes, and each
// reads what the other wrote.
func TestOpCodecIsReflections(t *testing.T) {
	for _, q := range []opReq{
		{},
		{Map: "engine_jobs", Kind: opPut, Key: []byte("k"), Val: bytes.Repeat([]byte{7}, 300)},
		{Map: "m", Kind: opCAS, Key: []byte{}, Del: true, ExpOK: true, ExpVer: backup.Ver{E: 3, S: 1 << 40}, Owner: "lock-1",
			TTL: -5, TTLSet: true},
		{Map: strings.Repeat("x", 40), Kind: opLock, Key: []byte("k"), Val: []byte{1}, TTL: 1 << 50},
	} {
		m := reflectOpReq{q.Map, q.Kind, q.Key, q.Val, q.Del, q.ExpOK, q.ExpVer, q.Owner, q.TTL, q.TTLSet, nil}
		checkWire(t, q, m, &opReq{}, func(back *opReq) bool {
			return back.Map == q.Map && back.Kind == q.Kind && bytes.Equal(back.Key, q.Key) && bytes.Equal(back.Val, q.Val) &&
				back.Del == q.Del && back.ExpOK == q.ExpOK && back.ExpVer == q.ExpVer && back.Owner == q.Owner &&
				back.TTL == q.TTL && back.TTLSet == q.TTLSet
		})
	}
	for _, a := range []opAns{
		{},
		{Code: codeOK, Old: bytes.Repeat([]byte{1}, 70000), Had: true, Wrote: true, Ver: backup.Ver{E: 1, S: 2}},
		{Code: codeMoved, Msg: "stowage: partition 7 moved", Ver: backup.Ver{E: 1 << 63}},
	} {
		m := reflectOpAns{a.Code, a.Msg, a.Old, a.Had, a.Wrote, a.Ver, nil}
		checkWire(t, a, m, &opAns{}, func(back *opAns) bool {
			return back.Code == a.Code && back.Msg == a.Msg && bytes.Equal(back.Old, a.Old) && back.Had == a.Had &&
				back.Wrote == a.Wrote && back.Ver == a.Ver
		})
	}
}

// checkWire compares msg's written-out bytes with those reflection makes
// of mirror, reads them back into back (also with an unknown field, and
// truncated: an error, never a panic).
func checkWire[M any, P interface {
	*Q
	cluster.WireParser
}, Q any](t *testing.T, msg cluster.WireAppender, mirror M, back P, same func(P) bool) {
	t.Helper()
	want, err := msgpack.Marshal(mirror)
	if err != nil {
		t.Fatal(err)
	}
	got := cluster.Encode(msg)
	if !bytes.Equal(got, want) {
		t.Errorf("%+v:\n written out %x\n reflection  %x", msg, got, want)
	}
	if s, ok := msg.(interface{ WireSize() int }); !ok || len(got) > s.WireSize() {
		t.Errorf("%+v: %d bytes, over its WireSize", msg, len(got))
	}
	// Reflection reads the written-out bytes as what they were made of:
	// it encodes what it read to the same bytes again.
	var fromWritten M
	err = msgpack.Unmarshal(got, &fromWritten)
	if again, _ := msgpack.Marshal(fromWritten); err != nil || !bytes.Equal(again, want) {
		t.Errorf("reflection read %+v (%v), want %+v", fromWritten, err, mirror)
	}
	later := reflect.ValueOf(&mirror).Elem()
	later.FieldByName("Later").Set(reflect.ValueOf([]int{1, 2, 3}))
	withLater, err := msgpack.Marshal(mirror)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Decode(withLater, back); err != nil || !same(back) {
		t.Errorf("written-out decoder read %+v (%v), want %+v", *back, err, msg)
	}
	for n := range len(got) {
		if n > 200 && n < len(got)-1 {
			continue // a long value's bytes: its start and its end tell
		}
		if err := cluster.Decode(got[:n], back); !errors.Is(err, cluster.ErrBadMessage) {
			t.Errorf("%d of %d bytes read: %v, want ErrBadMessage", n, len(got), err)
		}
	}
}

// TestOpCodecKnowsEveryField: a field added to opReq or opAns must be
// added to the written-out codec too (wire_op.go), and to the mirror
// types above; this fails until it is.
func TestOpCodecKnowsEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[opReq](): "m o k v d xo xv lo t ts",
		reflect.TypeFor[opAns](): "c x o h w r",
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

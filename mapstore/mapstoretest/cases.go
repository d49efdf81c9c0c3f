package mapstoretest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// A case is one subtest; parts 0 means the suite's default count.
type testCase struct {
	name  string
	parts int
	run   func(h *harness)
}

var cases = []testCase{
	{name: "StoreLoad", run: func(h *harness) {
		h.load([]byte("a")) // absent in an empty store
		h.store(h.rec([]byte("a"), []byte("1")))
		h.load([]byte("a"))
		h.load([]byte("b"))
		h.verify()
	}},
	{name: "StoreAll", run: func(h *harness) {
		h.storeAll(h.recs(keys("k", 200), []byte("batch")))
		h.verify()
	}},
	{name: "EmptyBatches", run: func(h *harness) {
		if err := h.s.StoreAll(h.ctx, nil); err != nil {
			h.t.Fatalf("StoreAll of no records: %v", err)
		}
		if err := h.s.DeleteAll(h.ctx, []mapstore.Record{}); err != nil {
			h.t.Fatalf("DeleteAll of no records: %v", err)
		}
		h.verify()
	}},
	{name: "DeleteLoad", run: func(h *harness) {
		h.store(h.rec([]byte("d"), []byte("1")), h.rec([]byte("kept"), []byte("2")))
		h.del(h.rec([]byte("d"), nil))
		h.load([]byte("d"))
		h.del(h.rec([]byte("never-stored"), nil)) // deleting an absent key succeeds
		h.verify()
	}},
	{name: "DeleteAll", run: func(h *harness) {
		ks := keys("k", 100)
		h.storeAll(h.recs(ks, []byte("v")))
		var odd [][]byte
		for i := 1; i < len(ks); i += 2 {
			odd = append(odd, ks[i])
		}
		h.delAll(h.recs(odd, nil))
		h.verify()
		if len(h.model) != 50 {
			h.t.Fatalf("model holds %d keys, want 50", len(h.model))
		}
	}},
	{name: "LoadAllPresentAndAbsent", run: func(h *harness) {
		h.storeAll(h.recs(keys("p", 20), []byte("v")))
		ask := append(keys("p", 10), keys("q", 10)...) // p-0..9 present, q-* absent
		rs, err := h.s.LoadAll(h.ctx, ask)
		if err != nil {
			h.t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range rs {
			got[string(r.Key)] = true
			if d := same(h.model[string(r.Key)], r); d != "" {
				h.t.Fatalf("LoadAll %q: %s", r.Key, d)
			}
		}
		for i := 0; i < 10; i++ {
			if !got[fmt.Sprint("p-", i)] || got[fmt.Sprint("q-", i)] {
				h.t.Fatalf("LoadAll returns %d entries %v, want p-0..p-9", len(rs), got)
			}
		}
		if rs, err := h.s.LoadAll(h.ctx, nil); err != nil || len(rs) != 0 {
			h.t.Fatalf("LoadAll of no keys = %d records, %v", len(rs), err)
		}
	}},
	{name: "LoadAllKeys", run: func(h *harness) {
		if ks, err := h.s.LoadAllKeys(h.ctx); err != nil || len(ks) != 0 {
			h.t.Fatalf("LoadAllKeys of an empty store = %d keys, %v", len(ks), err)
		}
		h.storeAll(h.recs(keys("k", 300), []byte("v")))
		h.del(h.rec([]byte("k-7"), nil))
		h.verify() // LoadAllKeys is exactly the 299 live keys
	}},
	{name: "LoadPartition", run: func(h *harness) {
		h.storeAll(h.recs(keys("k", 400), []byte("v")))
		h.delAll(h.recs(keys("k", 40), nil))
		byPart := h.partitionRecords()
		for p := 0; p < h.parts; p++ {
			want := 0
			for _, r := range h.model {
				if r.Partition == p {
					want++
				}
			}
			if len(byPart[p]) != want {
				h.t.Fatalf("LoadPartition %d yields %d entries, want %d", p, len(byPart[p]), want)
			}
		}
		h.verify()
	}},
	{name: "LoadPartitionStopsOnError", run: func(h *harness) {
		h.storeAll(h.recs(keys("k", 200), []byte("v")))
		stop := errors.New("stop here")
		for p := 0; p < h.parts; p++ {
			calls := 0
			err := h.s.LoadPartition(h.ctx, p, func(mapstore.Record) error { calls++; return stop })
			if !errors.Is(err, stop) || calls != 1 {
				h.t.Fatalf("LoadPartition %d with fn failing: err %v after %d calls, want the fn's error after 1", p, err, calls)
			}
		}
	}},
	{name: "OverwriteKeepsLatest", run: func(h *harness) {
		for i := 1; i <= 5; i++ {
			h.store(h.rec([]byte("x"), []byte(fmt.Sprint("v", i))))
		}
		batch := h.recs(keys("b", 30), []byte("first"))
		h.storeAll(batch)
		h.storeAll(h.recs(keys("b", 30), []byte("second")))
		h.verify()
		if string(h.model["x"].Value) != "v5" || h.model["x"].Version.Seq < 5 {
			h.t.Fatalf("model of x = %+v", h.model["x"])
		}
		h.reopen()
		h.verify()
	}},
	{name: "StoreAfterDelete", run: func(h *harness) {
		h.store(h.rec([]byte("r"), []byte("1")))
		h.del(h.rec([]byte("r"), nil))
		h.store(h.rec([]byte("r"), []byte("again")))
		h.verify()
		h.reopen()
		h.verify()
	}},
	{name: "ValuesSurviveRestart", run: func(h *harness) {
		h.storeAll(h.recs(keys("k", 500), []byte("before")))
		h.store(h.rec([]byte("single"), []byte("s")))
		h.reopen()
		h.verify()
		h.store(h.rec([]byte("after"), []byte("a")))
		h.reopen()
		h.reopen() // a restart with no writes in between changes nothing
		h.verify()
	}},
	{name: "DeletesSurviveRestart", run: func(h *harness) {
		ks := keys("k", 100)
		h.storeAll(h.recs(ks, []byte("v")))
		h.delAll(h.recs(ks[:30], nil))
		h.del(h.rec(ks[50], nil))
		h.reopen()
		h.verify()
		for _, k := range append(ks[:30:30], ks[50]) {
			h.load(k)
		}
		h.reopen()
		h.verify()
	}},
	{name: "VersionSurvivesRestart", run: func(h *harness) {
		versions := []mapstore.Version{
			{Epoch: 1, Seq: 1},
			{Epoch: 7, Seq: 1234},
			{Epoch: 1<<32 + 3, Seq: 1<<40 + 5}, // beyond 32 bits
			{Epoch: 1<<63 + 1, Seq: 1<<63 + 9}, // the top bit
		}
		for i, v := range versions {
			r := h.rec([]byte(fmt.Sprint("v-", i)), []byte("x"))
			r.Version = v
			h.bump(r.Partition, v)
			h.store(r)
		}
		h.reopen()
		h.verify()
	}},
	{name: "EmptyValuesAndBinaryKeys", run: func(h *harness) {
		all := make([]byte, 256)
		for i := range all {
			all[i] = byte(i)
		}
		binKeys := [][]byte{{0x00}, {0xff}, {0x00, 0xff, 0x00}, []byte("a\x00b"), {0xff, 0xff, 0xff, 0xff}, all,
			bytes.Repeat([]byte{0xfe, 0x00}, 512)}
		for _, k := range binKeys {
			h.store(h.rec(k, all))
		}
		h.store(h.rec([]byte("empty"), []byte{}))
		h.store(h.rec([]byte("nil"), nil))
		h.storeAll(h.recs([][]byte{[]byte("empty-batch"), {0x00, 0x01}}, []byte{}))
		h.verify()
		h.reopen()
		h.verify()
		for _, k := range []string{"empty", "nil", "empty-batch"} {
			r, ok, err := h.s.Load(h.ctx, []byte(k))
			if err != nil || !ok || len(r.Value) != 0 {
				h.t.Fatalf("Load %q = %d bytes, %v, %v; want present and empty", k, len(r.Value), ok, err)
			}
		}
	}},
	{name: "LargeValue", run: func(h *harness) {
		big := make([]byte, 1<<20)
		for i := range big {
			big[i] = byte(i*31 + i>>8)
		}
		h.store(h.rec([]byte("big"), big), h.rec([]byte("small"), []byte("s")))
		h.storeAll(h.recs([][]byte{[]byte("big-in-batch")}, big))
		h.verify()
		h.reopen()
		h.verify()
	}},
	{name: "ManyKeysAllPartitions", parts: keyhash.DefaultPartitions, run: func(h *harness) {
		n, batch := 20000, 2000
		if h.small {
			n, batch = 2000, 500
		}
		ks := keys("many", n)
		for i := 0; i < n; i += batch {
			h.storeAll(h.recs(ks[i:i+batch], []byte(fmt.Sprintf("value-%d", i))))
		}
		h.delAll(h.recs(ks[:n/10], nil))
		h.reopen()
		h.verify()
		for p, rs := range h.partitionRecords() {
			if len(rs) == 0 {
				h.t.Fatalf("partition %d of %d holds no key of %d", p, h.parts, len(h.model))
			}
		}
	}},
	{name: "ConcurrentStore", run: func(h *harness) {
		writers, each := 32, 24
		if h.small {
			writers, each = 8, 12
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		errs := make(chan error, writers+1)
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					r := h.rec([]byte(fmt.Sprintf("g%d-%d", g, i)), []byte(fmt.Sprint("value of ", g, "/", i)))
					c := copies([]mapstore.Record{r})
					if err := h.s.Store(h.ctx, r); err != nil {
						errs <- fmt.Errorf("Store %q: %w", r.Key, err)
						return
					}
					h.applied(c, false)
				}
			}()
		}
		// A reader runs beside the writers: reads must neither fail nor race.
		var rg sync.WaitGroup
		rg.Add(1)
		go func() {
			defer rg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, _, err := h.s.Load(h.ctx, []byte(fmt.Sprintf("g%d-%d", i%writers, i%each))); err != nil {
					errs <- fmt.Errorf("Load beside writers: %w", err)
					return
				}
			}
		}()
		wg.Wait()
		close(done)
		rg.Wait()
		close(errs)
		for err := range errs {
			h.t.Fatal(err)
		}
		if len(h.model) != writers*each {
			h.t.Fatalf("model holds %d keys, want %d", len(h.model), writers*each)
		}
		h.verify()
		h.reopen()
		h.verify()
	}},
	{name: "ReturnedRecordsAreOwned", run: func(h *harness) {
		h.storeAll(h.recs(keys("own", 100), []byte("value")))
		scribble := func(b []byte) {
			for i := range b {
				b[i] = 'X'
			}
		}
		// Records kept from LoadPartition must stay intact across later
		// calls of fn (no buffer reuse), then scribbling on them must not
		// reach the store.
		for _, rs := range h.partitionRecords() {
			for _, r := range rs {
				if d := same(h.model[string(r.Key)], r); d != "" {
					h.t.Fatalf("record kept from LoadPartition changed: %s", d)
				}
				scribble(r.Key)
				scribble(r.Value)
			}
		}
		r, _, err := h.s.Load(h.ctx, []byte("own-1"))
		if err != nil {
			h.t.Fatal(err)
		}
		scribble(r.Key)
		scribble(r.Value)
		rs, err := h.s.LoadAll(h.ctx, keys("own", 10))
		if err != nil {
			h.t.Fatal(err)
		}
		for _, r := range rs {
			scribble(r.Key)
			scribble(r.Value)
		}
		ks, err := h.s.LoadAllKeys(h.ctx)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, k := range ks {
			scribble(k)
		}
		h.verify()
	}},
	{name: "CallsAfterClose", run: func(h *harness) {
		h.store(h.rec([]byte("a"), []byte("1")))
		s := h.s
		h.s = nil
		if err := s.Close(); err != nil {
			h.t.Fatalf("Close: %v", err)
		}
		r := h.rec([]byte("b"), []byte("2"))
		calls := []struct {
			name string
			call func() error
		}{
			{"Store", func() error { return s.Store(h.ctx, r) }},
			{"StoreAll", func() error { return s.StoreAll(h.ctx, []mapstore.Record{r}) }},
			{"Delete", func() error { return s.Delete(h.ctx, r) }},
			{"DeleteAll", func() error { return s.DeleteAll(h.ctx, []mapstore.Record{r}) }},
			{"Load", func() error { _, _, err := s.Load(h.ctx, []byte("a")); return err }},
			{"LoadAll", func() error { _, err := s.LoadAll(h.ctx, [][]byte{[]byte("a")}); return err }},
			{"LoadAllKeys", func() error { _, err := s.LoadAllKeys(h.ctx); return err }},
			{"LoadPartition", func() error {
				return s.LoadPartition(h.ctx, r.Partition, func(mapstore.Record) error { return nil })
			}},
		}
		for _, c := range calls {
			if err := c.call(); !errors.Is(err, mapstore.ErrClosed) {
				h.t.Errorf("%s after Close: err = %v, want mapstore.ErrClosed", c.name, err)
			}
		}
		h.reopen() // what was stored before Close is still there, b is not
		h.verify()
	}},
}

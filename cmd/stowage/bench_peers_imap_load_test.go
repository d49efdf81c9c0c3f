package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestImapLoadArgs(t *testing.T) {
	args := imapLoadArgs("/x/peers.jar", "hdfs://127.0.0.1:9000", "/ns/a", []string{"dfs.replication=1"}, 50_000)
	at := slices.Index(args, "stowage.peers.ImapLoadBench")
	if at < 0 || args[at-1] != "/x/peers.jar" || args[at-2] != "-cp" {
		t.Fatalf("args %q: want -cp jar then ImapLoadBench", args)
	}
	want := []string{"--fs", "hdfs://127.0.0.1:9000", "--namespace", "/ns/a", "--entries", "50000", "--value-size", "256", "--hadoop", "dfs.replication=1"}
	if got := args[at+1:]; !slices.Equal(got, want) {
		t.Errorf("args after the class: %q, want %q", got, want)
	}
	if args = imapLoadArgs("/x/peers.jar", "file:///", "/ns/b", nil, 5_000); slices.Contains(args, "--hadoop") {
		t.Errorf("local disk args %q: want no --hadoop", args)
	}
}

func TestParseImapLoad(t *testing.T) {
	out := "log noise\n{\"system\":\"seatunnel\",\"workload\":\"imap-load\",\"entries\":50000,\"loaded\":49998,\"returned\":49998,\"store_failures\":2," +
		"\"load_ms\":1500.0,\"loadall_ms\":1200.5,\"entries_per_sec\":33332.0,\"files\":2,\"file_bytes\":17630000}\n"
	r, err := parseImapLoad([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := imapLoadRow{System: "seatunnel", Entries: 50000, Loaded: 49998, Returned: 49998, PerSec: 33332, LoadMS: 1500, LoadAllMS: 1200.5,
		StoreFailures: 2, Files: 2, Bytes: 17630000}
	if r != want {
		t.Errorf("parseImapLoad = %+v, want %+v", r, want)
	}
	// A load of nothing is a figure to report (loaded 0), not a parse error.
	if r, err := parseImapLoad([]byte(`{"workload":"imap-load","entries":10,"loaded":0,"load_ms":3}`)); err != nil || r.Loaded != 0 || r.Entries != 10 {
		t.Errorf("empty load: %+v, %v", r, err)
	}
	for _, bad := range []string{
		"",
		"{oops",
		`{"workload":"imap-write","entries":10,"loaded":10,"load_ms":3}`,
		`{"workload":"imap-load","entries":10,"load_ms":3}`,
		`{"workload":"imap-load","loaded":10,"load_ms":3}`,
		`{"workload":"imap-load","entries":10,"loaded":10}`,
	} {
		if _, err := parseImapLoad([]byte(bad)); err == nil {
			t.Errorf("parseImapLoad(%q) accepted it", bad)
		}
	}
}

func TestPrintImapLoad(t *testing.T) {
	rows := []imapLoadRow{
		{System: "stowage", Round: 1, Entries: 1000, Loaded: 1000, Returned: 1000, PerSec: 300_000},
		{System: "seatunnel", Round: 1, Entries: 1000, Loaded: 1000, Returned: 1000, PerSec: 20_000},
		{System: "seatunnel", Round: 2, Entries: 1000, Loaded: 1000, Returned: 1000, PerSec: 40_000},
		{System: "stowage", Round: 2, Entries: 1000, Loaded: 1000, Returned: 1000, PerSec: 500_000},
	}
	var out bytes.Buffer
	if err := printImapLoad(&out, rows, 1000); err != nil {
		t.Fatalf("printImapLoad with full loads: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "stowage 400000 entries/s, SeaTunnel's loadAll 30000 entries/s") || !strings.Contains(got, "stowage/SeaTunnel 13.33") || strings.Contains(got, "ERROR") {
		t.Errorf("full loads printed %q", got)
	}

	rows[2].Loaded, rows[2].Returned, rows[2].StoreFailures = 997, 997, 3
	out.Reset()
	err := printImapLoad(&out, rows, 1000)
	want := "round 2: SeaTunnel's loadAll held 997 of the 1000 entries written (3 missing, 997 returned in all; storeAll reported 3 writes it could not make)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a short SeaTunnel load: error %v, want one saying %q", err, want)
	}
	if got := out.String(); !strings.Contains(got, "ERROR: "+want) || !strings.Contains(got, "stowage/SeaTunnel") {
		t.Errorf("a short SeaTunnel load printed %q: want the ratio and the error line", got)
	}

	// More entries than written (a resurrected or foreign key) is an error too.
	rows[2] = imapLoadRow{System: "seatunnel", Round: 2, Entries: 1000, Loaded: 1000, Returned: 1001, PerSec: 40_000}
	if err := printImapLoad(&out, rows, 1000); err == nil || !strings.Contains(err.Error(), "1001 returned in all") {
		t.Errorf("a load with an extra entry: %v", err)
	}
}

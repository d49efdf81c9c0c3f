package checkpoint_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// inspectFixture: job "a" with pipelines 1 (checkpoints 1..3, 3 damaged)
// and 2 (checkpoint 7), job "b" with one checkpoint, a stray and a
// temporary file.
func inspectFixture(t *testing.T) *memfs.FS {
	mem := memfs.New()
	s := checkpointtest.Open(t, mem, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	for id := int64(1); id <= 3; id++ {
		mustStore(t, s, checkpointtest.State("a", 1, id))
	}
	mustStore(t, s, checkpointtest.State("a", 2, 7))
	mustStore(t, s, checkpointtest.State("b", 1, 1))
	checkpointtest.Rewrite(t, mem, checkpointtest.FilePath("a", 1, 3), func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
	for _, n := range []string{"checkpointtest/b/notes.txt", "checkpointtest/b/" + checkpoint.FileName(1, 2) + ".tmp-0123"} {
		if err := fsbackend.WriteFile(ctx, mem, n, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

func TestInspect(t *testing.T) {
	mem := inspectFixture(t)
	jobs, err := checkpoint.Inspect(ctx, mem, checkpointtest.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Job != "a" || jobs[1].Job != "b" {
		t.Fatalf("jobs = %+v", jobs)
	}
	a := jobs[0]
	if a.Files != 4 || len(a.Pipelines) != 2 || a.Pipelines[0] != (checkpoint.PipelineSummary{Pipeline: 1, Checkpoints: 3, Oldest: 1, Latest: 3}) ||
		a.Pipelines[1] != (checkpoint.PipelineSummary{Pipeline: 2, Checkpoints: 1, Oldest: 7, Latest: 7}) || a.Bytes <= 0 {
		t.Fatalf("job a = %+v", a)
	}
	if b := jobs[1]; b.Files != 1 || b.Stray != 1 || b.Temporary != 1 {
		t.Fatalf("job b = %+v", b)
	}
}

func TestList(t *testing.T) {
	mem := inspectFixture(t)
	list, err := checkpoint.List(ctx, mem, checkpointtest.Namespace, "a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ci := range list {
		if ci.CRC != checkpoint.CRCUnchecked || ci.Size <= 0 || !strings.HasPrefix(ci.File, "/checkpointtest/a/") {
			t.Fatalf("entry %+v", ci)
		}
		got = append(got, checkpoint.FileName(ci.Pipeline, ci.CheckpointID))
	}
	want := []string{checkpoint.FileName(1, 1), checkpoint.FileName(1, 2), checkpoint.FileName(1, 3), checkpoint.FileName(2, 7)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if _, err := checkpoint.List(ctx, mem, checkpointtest.Namespace, "../x"); !errors.Is(err, checkpoint.ErrInvalidJobID) {
		t.Fatalf("List with a bad job id: %v", err)
	}
}

func TestShow(t *testing.T) {
	mem := inspectFixture(t)
	cases := []struct {
		pipeline int
		id       int64
		wantID   int64
		wantCRC  string
		wantErr  error
	}{
		{1, checkpoint.Latest, 2, checkpoint.CRCOK, nil}, // 3 is damaged
		{1, 1, 1, checkpoint.CRCOK, nil},
		{1, 3, 3, checkpoint.CRCBad, nil},
		{2, checkpoint.Latest, 7, checkpoint.CRCOK, nil},
		{1, 4, 0, "", checkpoint.ErrNotFound},
		{9, checkpoint.Latest, 0, "", checkpoint.ErrNotFound},
	}
	for _, tc := range cases {
		ci, state, err := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", tc.pipeline, tc.id)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Show(a, %d, %d): err %v, want %v", tc.pipeline, tc.id, err, tc.wantErr)
			}
			continue
		}
		if err != nil || ci.CheckpointID != tc.wantID || ci.CRC != tc.wantCRC {
			t.Errorf("Show(a, %d, %d) = %+v, %v; want checkpoint %d crc %s", tc.pipeline, tc.id, ci, err, tc.wantID, tc.wantCRC)
			continue
		}
		if tc.wantCRC == checkpoint.CRCOK {
			want := checkpointtest.State("a", tc.pipeline, tc.wantID).States
			if string(state) != string(want) || ci.StateLength != int64(len(want)) || ci.Created.IsZero() {
				t.Errorf("Show(a, %d, %d): state %q length %d created %v", tc.pipeline, tc.id, state, ci.StateLength, ci.Created)
			}
		} else if ci.Damage == nil || state != nil {
			t.Errorf("Show of a damaged file: damage %v, state %q", ci.Damage, state)
		}
		// Only the latest of pipeline 1 passed over a damaged checkpoint.
		if wantSkip := tc.pipeline == 1 && tc.id == checkpoint.Latest; wantSkip != (len(ci.Skipped) > 0) {
			t.Errorf("Show(a, %d, %d): skipped %+v", tc.pipeline, tc.id, ci.Skipped)
		}
	}
	ci, _, _ := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", 1, checkpoint.Latest)
	if len(ci.Skipped) != 1 || ci.Skipped[0].CheckpointID != 3 || ci.Skipped[0].File != "/checkpointtest/a/"+checkpoint.FileName(1, 3) || ci.Skipped[0].Reason == "" {
		t.Fatalf("latest of pipeline 1 skipped %+v, want damaged checkpoint 3", ci.Skipped)
	}
	b, _ := json.Marshal(ci)
	if !strings.Contains(string(b), `"skipped_damaged":[{`) || !strings.Contains(string(b), `"checkpoint_id":3`) {
		t.Errorf("JSON of the latest lacks the skipped checkpoint: %s", b)
	}
	clean, _, _ := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", 2, checkpoint.Latest)
	if b, _ := json.Marshal(clean); strings.Contains(string(b), "skipped") {
		t.Errorf("JSON of a clean latest mentions skipped: %s", b)
	}

	// Every checkpoint of the pipeline damaged: the error says so.
	for _, id := range []int64{1, 2} {
		checkpointtest.Rewrite(t, mem, checkpointtest.FilePath("a", 1, id), func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
	}
	_, _, err := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", 1, checkpoint.Latest)
	if !errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "3 damaged") {
		t.Fatalf("latest with every checkpoint damaged: %v, want ErrNotFound counting 3 damaged", err)
	}
}

func TestVerifyReport(t *testing.T) {
	mem := inspectFixture(t)
	var calls, lastTotal int
	r, err := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{Progress: func(done, total int) { calls, lastTotal = done, total }})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || r.Jobs != 2 || r.Checkpoints != 5 || r.Good != 4 || len(r.Damaged) != 1 || calls != 5 || lastTotal != 5 {
		t.Fatalf("report %+v, progress %d/%d", r, calls, lastTotal)
	}
	d := r.Damaged[0]
	if d.Job != "a" || d.Pipeline != 1 || d.CheckpointID != 3 || d.File != "/checkpointtest/a/"+checkpoint.FileName(1, 3) || d.Offset <= 0 || !strings.Contains(d.Reason, "checksum") {
		t.Fatalf("damage %+v", d)
	}
	if len(r.Stray) != 1 || len(r.Temporary) != 1 {
		t.Fatalf("stray %v temporary %v", r.Stray, r.Temporary)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"namespace"`, `"damaged"`, `"job":"a"`, `"pipeline":1`, `"checkpoint_id":3`, `"file"`, `"offset"`, `"reason"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON report lacks %s: %s", key, b)
		}
	}
	one, err := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{Job: "b"})
	if err != nil || !one.OK() || one.Checkpoints != 1 || one.Jobs != 1 {
		t.Fatalf("verify of job b: %+v, %v", one, err)
	}
	ci, _, _ := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", 1, 1)
	b, _ = json.Marshal(ci)
	for _, key := range []string{`"job"`, `"pipeline"`, `"checkpoint_id"`, `"file"`, `"size"`, `"state_length"`, `"crc":"ok"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON checkpoint info lacks %s: %s", key, b)
		}
	}
}

// A job whose deletion was interrupted is shown as being deleted, and Show
// finds no latest checkpoint of it, as the storage does.
func TestInspectJobBeingDeleted(t *testing.T) {
	mem := inspectFixture(t)
	if err := fsbackend.WriteFile(ctx, mem, checkpointtest.LatestDir("a")+"/deleting", nil); err != nil {
		t.Fatal(err)
	}
	jobs, err := checkpoint.Inspect(ctx, mem, checkpointtest.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || !jobs[0].Deleting || jobs[1].Deleting || jobs[0].Stray != 0 {
		t.Fatalf("jobs = %+v, want a being deleted (its latest directory no stray), b not", jobs)
	}
	r, err := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Deleting) != 1 || r.Deleting[0] != "a" {
		t.Fatalf("Verify.Deleting = %v, want [a]", r.Deleting)
	}
	if _, _, err := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "a", 2, checkpoint.Latest); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Show latest of a job being deleted: %v, want ErrNotFound", err)
	}
	if info, _, err := checkpoint.Show(ctx, mem, checkpointtest.Namespace, "b", 1, checkpoint.Latest); err != nil || info.CheckpointID != 1 {
		t.Fatalf("Show latest of b: %+v, %v", info, err)
	}
}

// TestInspectDeletionMarks: a job whose mark is in the namespace's
// deletion directory is summarised as being deleted, one of which only
// the mark is left is listed too, and the marks are neither jobs nor
// loose files; nor are the files of a deleted job's directory left in
// the namespace's trash directory.
func TestInspectDeletionMarks(t *testing.T) {
	mem := inspectFixture(t)
	for _, job := range []string{"b", "gone"} {
		if err := fsbackend.WriteFile(ctx, mem, "checkpointtest/..deleting/"+job, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{checkpoint.FileName(1, 7), "latest/complete"} {
		if err := fsbackend.WriteFile(ctx, mem, "checkpointtest/..trash/17-1/"+n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{}); err != nil || fmt.Sprint(r.Stray) != "[/checkpointtest/b/notes.txt]" {
		t.Fatalf("verify with files in the trash: stray %v, %v; want only the fixture's b/notes.txt", r.Stray, err)
	}
	jobs, err := checkpoint.Inspect(ctx, mem, checkpointtest.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s:%v:%d", j.Job, j.Deleting, j.Files))
	}
	if want := "[a:false:4 b:true:1 gone:true:0]"; fmt.Sprint(got) != want {
		t.Fatalf("jobs = %v, want %s", got, want)
	}
	s := checkpointtest.Open(t, mem, checkpoint.Options{})
	if sum, err := s.Jobs(ctx); err != nil || len(sum) != 3 || !sum[1].Deleting {
		t.Fatalf("Jobs = %+v, %v", sum, err)
	}
}

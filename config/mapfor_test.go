package config_test

import (
	"testing"

	"github.com/stowage/stowage/config"
)

func TestMapFor(t *testing.T) {
	h := config.Hazelcast{Maps: []config.MapConfig{
		{Pattern: "engine*", BackupCount: 1},
		{Pattern: "engine_running*", BackupCount: 2},
		{Pattern: "*_metrics", BackupCount: 3},
		{Pattern: "engine_special", BackupCount: 4},
		{Pattern: "default", BackupCount: 5},
	}}
	cases := []struct {
		name    string
		pattern string
		found   bool
	}{
		{"engine_special", "engine_special", true},          // exact beats every pattern
		{"engine_runningJobInfo", "engine_running*", true},  // longest pattern wins
		{"engine_jobInfo", "engine*", true},                 //
		{"engine", "engine*", true},                         // '*' matches nothing too
		{"job_metrics", "*_metrics", true},                  //
		{"engine_running_metrics", "engine_running*", true}, // 14 literal characters beat 8
		{"engine_special@partitionKey", "engine_special", true},
		{"other", "default", true},
	}
	for _, tc := range cases {
		mc, ok := h.MapFor(tc.name)
		if ok != tc.found || mc.Pattern != tc.pattern {
			t.Errorf("MapFor(%q) = %q, %v; want %q, %v", tc.name, mc.Pattern, ok, tc.pattern, tc.found)
		}
	}
	bare := config.Hazelcast{Maps: []config.MapConfig{{Pattern: "engine*", BackupCount: 2}}}
	mc, ok := bare.MapFor("jobs")
	if ok || mc.Pattern != "jobs" || mc.BackupCount != 1 || mc.MapStore != nil {
		t.Fatalf("no match: %+v, %v; want a default entry and false", mc, ok)
	}
}

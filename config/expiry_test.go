package config_test

import (
	"testing"

	"github.com/stowage/stowage/config"
)

// A map entry's time-to-live-seconds and max-idle-seconds are read (and
// no longer reported as having no effect); a map without them has none.
func TestMapExpirySettings(t *testing.T) {
	y := "hazelcast:\n  map:\n    engine*:\n      time-to-live-seconds: 3600\n      max-idle-seconds: 600\n"
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := cfg.Hazelcast.MapFor("engine_jobs")
	if mc.TimeToLiveSeconds != 3600 || mc.MaxIdleSeconds != 600 {
		t.Fatalf("time-to-live-seconds %d, max-idle-seconds %d; want 3600, 600", mc.TimeToLiveSeconds, mc.MaxIdleSeconds)
	}
	for _, k := range cfg.Ignored() {
		if k == "hazelcast.map.engine*.time-to-live-seconds" || k == "hazelcast.map.engine*.max-idle-seconds" {
			t.Errorf("%s is reported as having no effect", k)
		}
	}
	other, _ := cfg.Hazelcast.MapFor("other")
	if other.TimeToLiveSeconds != 0 || other.MaxIdleSeconds != 0 {
		t.Fatalf("a map without settings expires: %+v", other)
	}
}

package checkpoint_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashScenarioEnv) != "" {
		os.Exit(crashChild()) // a child of the crash tests (crash_test.go)
	}
	goleak.VerifyTestMain(m)
}

package rb

import (
	"os"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/engine"
)

func TestLoad(t *testing.T) {
	for i := 0; i < 20; i++ {
		t0 := time.Now()
		if _, err := engine.Load(os.Getenv("LF"), engine.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			t.Logf("load %v", time.Since(t0))
		}
	}
}

package robustness

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/embedtest"
)

// cluster is the three-member etcd the package's tests share; each run
// uses its own key prefix and leaves every member running.
var cluster *embedtest.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	c, err := embedtest.StartClusterServer(embedtest.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "embedtest: %v\n", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	c.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

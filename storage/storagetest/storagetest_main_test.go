package storagetest_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/embedtest"
)

// etcd is the embedded etcd every test of the package shares; each test
// uses its own key prefix (embedtest.Prefix).
var etcd *embedtest.Server

func TestMain(m *testing.M) {
	etcd = embedtest.MustStartServer(embedtest.Options{})
	code := m.Run()
	etcd.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

package reflector

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the embedded etcd shared by the package's tests and
// benchmarks; each test uses its own key prefix (embedtest.Prefix).
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	etcdServer = embedtest.MustStartServer(embedtest.Options{})
	code := m.Run()
	etcdServer.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

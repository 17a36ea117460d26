package reflector

import (
	"os"
	"testing"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the embedded etcd shared by the package's tests and
// benchmarks; each test uses its own key prefix (embedtest.Prefix).
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

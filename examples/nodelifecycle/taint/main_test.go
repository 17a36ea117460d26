package taint

import (
	"os"
	"testing"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

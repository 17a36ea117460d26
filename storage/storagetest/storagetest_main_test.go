package storagetest_test

import (
	"os"
	"testing"

	"github.com/listwatch/listwatch/embedtest"
)

// etcd is the embedded etcd every test of the package shares; each test
// uses its own key prefix (embedtest.Prefix).
var etcd *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcd, embedtest.Options{}))
}

package gc_test

import (
	"os"
	"testing"

	"github.com/listwatch/listwatch/embedtest"
)

// etcd is the embedded etcd shared by the package's tests; each test uses
// its own key prefix.
var etcd *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcd, embedtest.Options{}))
}

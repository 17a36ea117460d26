package embedtest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// RunMain is a test package's TestMain body: it starts one embedded etcd
// with opts, stores it in *shared for the package's tests, runs them, stops
// etcd and, when the tests passed, fails the run if goroutines leaked. It
// returns the exit code:
//
//	var etcd *embedtest.Server
//
//	func TestMain(m *testing.M) { os.Exit(embedtest.RunMain(m, &etcd, embedtest.Options{})) }
func RunMain(m *testing.M, shared **Server, opts Options) int {
	srv, err := StartServer(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "embedtest: %v\n", err)
		return 1
	}
	*shared = srv
	code := m.Run()
	srv.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	return code
}

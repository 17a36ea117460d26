package deps
import (
 _ "go.etcd.io/etcd/client/v3"
 _ "go.etcd.io/etcd/server/v3/embed"
 _ "k8s.io/apimachinery/pkg/runtime"
 _ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
 _ "k8s.io/apimachinery/pkg/util/wait"
 _ "github.com/google/btree"
 _ "go.uber.org/goleak"
 _ "github.com/stretchr/testify/require"
 _ "golang.org/x/time/rate"
 _ "github.com/prometheus/client_golang/prometheus"
)

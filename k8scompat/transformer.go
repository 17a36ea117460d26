package k8scompat

import (
	"context"

	k8svalue "k8s.io/apiserver/pkg/storage/value"

	lwvalue "github.com/listwatch/listwatch/storage/value"
)

// Transformer presents a Kubernetes value.Transformer (for example the
// encryption-at-rest transformers Kubernetes builds from an
// EncryptionConfiguration) as a listwatch value.Transformer, so that a
// listwatch store reads and writes the same bytes Kubernetes' etcd3 store
// would. The authenticated data (the etcd key) and the stale flag are passed
// through unchanged.
func Transformer(t k8svalue.Transformer) lwvalue.Transformer {
	return transformer{t: t}
}

type transformer struct {
	t k8svalue.Transformer
}

func (t transformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, bool, error) {
	return t.t.TransformFromStorage(ctx, data, dataCtx)
}

func (t transformer) TransformToStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, error) {
	return t.t.TransformToStorage(ctx, data, dataCtx)
}

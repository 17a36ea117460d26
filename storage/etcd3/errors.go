package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/listwatch/listwatch/storage"
)

// ctxError wraps the error of a done context: a deadline becomes a
// storage timeout that still matches context.DeadlineExceeded; a
// cancellation is returned wrapped as is.
func ctxError(ctx context.Context, op string) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &storage.Error{Code: storage.CodeTimeout, Msg: op + ": deadline exceeded", Err: err}
	}
	return fmt.Errorf("etcd3 %s: %w", op, err)
}

// interpret maps an error returned by clientv3 to a storage error. rev is
// the revision the request asked for (for 410 and too-large errors).
func (s *Store) interpret(ctx context.Context, err error, key string, rev int64, op string) error {
	if err == nil {
		return nil
	}
	var se *storage.Error
	if errors.As(err, &se) {
		return err
	}
	if ctx.Err() != nil {
		return ctxError(ctx, op)
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		s.compaction.invalidate()
		e := storage.NewGoneError(rev, 0)
		e.Key, e.Err = key, err
		return e
	case errors.Is(err, rpctypes.ErrFutureRev):
		cur, _ := s.currentRevision(ctx)
		e := storage.NewTooLargeResourceVersionError(uint64(rev), uint64(cur), 1)
		e.Key = key
		return e
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return &storage.Error{Code: storage.CodeRequestTooLarge, Key: key, Msg: op + ": request is too large for etcd", Err: err}
	case errors.Is(err, rpctypes.ErrTooManyRequests):
		return &storage.Error{Code: storage.CodeTooManyRequests, Key: key, Msg: op + ": too many requests to etcd", Err: err, RetryAfterSeconds: 1}
	case errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost), errors.Is(err, rpctypes.ErrTimeoutWaitAppliedIndex),
		errors.Is(err, context.DeadlineExceeded):
		return &storage.Error{Code: storage.CodeTimeout, Key: key, Msg: op, Err: err}
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrNotLeader),
		errors.Is(err, rpctypes.ErrLeaderChanged), errors.Is(err, rpctypes.ErrStopped),
		errors.Is(err, rpctypes.ErrUnhealthy), errors.Is(err, rpctypes.ErrNoSpace):
		return &storage.Error{Code: storage.CodeUnreachable, Key: key, Msg: op, Err: err}
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.ResourceExhausted:
			// The client refuses to send a message above its limit.
			return &storage.Error{Code: storage.CodeRequestTooLarge, Key: key, Msg: op, Err: err}
		case codes.Unavailable:
			return &storage.Error{Code: storage.CodeUnreachable, Key: key, Msg: op, Err: err}
		case codes.DeadlineExceeded:
			return &storage.Error{Code: storage.CodeTimeout, Key: key, Msg: op, Err: err}
		case codes.Canceled:
			return &storage.Error{Code: storage.CodeUnreachable, Key: key, Msg: op, Err: err}
		}
	}
	return fmt.Errorf("etcd3 %s (key %q): %w", op, key, err)
}

// currentRevision is a best-effort read of etcd's current revision.
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, s.resourceRangePrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

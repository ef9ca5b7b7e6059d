package grpcserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/kv"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// A handler answers with a status error for what its service decides (its
// own sentinels: not found, taken, invalid) and passes any other error on
// as it got it. CallerError is then the one place where such an error
// becomes the status a caller sees, for every service, over gRPC and REST
// alike (markErrors, and the REST facade's credential check).
var (
	errUnavailable = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "store unavailable")
	// A transaction that kept conflicting with other writers after the
	// engine's retries: the request was fine and the store is busy, so it is
	// the store's trouble (5xx) and retrying later helps (Unavailable), as
	// for a store that cannot be reached (README, decisions).
	errConflict = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, kv.ErrConflict.Error())
	// The store refuses writes for want of space (etcd's NOSPACE alarm):
	// the request was fine, and an operator must free space (README).
	errFull     = rest.Error(codes.Unavailable, http.StatusServiceUnavailable, "store full")
	errCanceled = rest.Error(codes.Canceled, 499, "request cancelled")
	errDeadline = rest.Error(codes.DeadlineExceeded, http.StatusGatewayTimeout, "deadline exceeded")
)

// CallerError returns the status a caller sees for a handler's error: a
// status error as it is (with the REST facade's detail, rest.Mark); the
// errors every kv engine shares (CONTRACT §4): the store unreachable 503
// "store unavailable" (Unavailable), a store out of space 503 "store
// full" (Unavailable), a write over the engine's limits 413
// naming the limit (ResourceExhausted), a transaction that kept
// conflicting 503 (Unavailable); an ended request context its own code;
// anything else is logged and answered "internal error", never with its
// text.
func CallerError(log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return rest.Mark(err)
	}
	switch {
	case errors.Is(err, kv.ErrUnavailable):
		return errUnavailable
	case errors.Is(err, kv.ErrNoSpace):
		return errFull
	case errors.Is(err, kv.ErrTooLarge):
		return rest.Error(codes.ResourceExhausted, http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, kv.ErrConflict):
		return errConflict
	case errors.Is(err, context.Canceled):
		return errCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return errDeadline
	}
	log.Error("internal failure", "err", err)
	return errInternal
}

// markErrors gives every error its caller's status (CallerError), with the
// detail the REST facade reads, so that the facade can tell a handler's
// answer from its own failures.
func markErrors(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		resp, err := next(ctx, req)
		if err != nil {
			err = CallerError(log.With("method", info.FullMethod), err)
		}
		return resp, err
	}
}

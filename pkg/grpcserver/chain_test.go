package grpcserver

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc"
)

// TestChain: interceptors run first outermost, each sees the call's info
// and the request its outer one passed on, and one that calls its next
// twice (a retry) runs the rest of the chain twice; calls in a row and at
// the same time each walk their own chain.
func TestChain(t *testing.T) {
	var trail []string
	mark := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			trail = append(trail, name+":"+info.FullMethod+":"+req.(string))
			return next(ctx, req.(string)+name)
		}
	}
	retry := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if _, err := next(ctx, req); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
	c := chain(mark("a"), retry, mark("b"))
	info := &grpc.UnaryServerInfo{FullMethod: "/s/M"}
	resp, err := c(context.Background(), "", info, func(_ context.Context, req any) (any, error) {
		trail = append(trail, "handler:"+req.(string))
		return req.(string) + "!", nil
	})
	want := []string{"a:/s/M:", "b:/s/M:a", "handler:ab", "b:/s/M:a", "handler:ab"}
	if err != nil || resp != "ab!" || !slices.Equal(trail, want) {
		t.Fatalf("chain answered %v, %v after %q, want ab! after %q", resp, err, trail, want)
	}

	add := chain(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		return next(ctx, req.(int)+1)
	})
	done := make(chan error)
	for n := range 8 {
		go func() {
			for range 1000 {
				got, _ := add(context.Background(), n, info, func(_ context.Context, req any) (any, error) { return req.(int) * 2, nil })
				if got != (n+1)*2 {
					done <- nil
					t.Errorf("call with %d answered %v, want %d", n, got, (n+1)*2)
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		<-done
	}
}

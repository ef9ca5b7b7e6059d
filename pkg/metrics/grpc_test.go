package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGRPCMetrics: GRPCMetrics counts calls into the same series, with the
// same help, labels and values, as the go-grpc-middleware Prometheus
// provider it replaced: unary calls answered, refused with a status, with
// a context error or a plain error, a method name without a service, and
// streams of each type with messages received, sent and failed.
func TestGRPCMetrics(t *testing.T) {
	ref := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(latencyBuckets)))
	ours := newGRPCMetrics(latencyBuckets)
	type interceptors struct {
		unary  grpc.UnaryServerInterceptor
		stream grpc.StreamServerInterceptor
	}
	run := func(ic interceptors) {
		for _, c := range []struct {
			method string
			err    error
		}{
			{"/a.S/Get", nil}, {"/a.S/Get", nil}, {"/a.S/Get", status.Error(codes.NotFound, "no")},
			{"/a.S/Put", context.Canceled}, {"/a.S/Put", errors.New("plain")}, {"/a.S/Del", status.Error(codes.PermissionDenied, "no")},
			{"odd", nil}, {"/b.T/X/Y", status.Error(codes.Code(40), "beyond")},
		} {
			ic.unary(context.Background(), "req", &grpc.UnaryServerInfo{FullMethod: c.method}, func(context.Context, any) (any, error) { return "resp", c.err })
		}
		for i, info := range []grpc.StreamServerInfo{
			{FullMethod: "/a.S/Watch", IsServerStream: true}, {FullMethod: "/a.S/Up", IsClientStream: true},
			{FullMethod: "/a.S/Chat", IsClientStream: true, IsServerStream: true}, {FullMethod: "/a.S/Plain"},
		} {
			ic.stream(nil, &fakeStream{recv: 2}, &info, func(_ any, ss grpc.ServerStream) error {
				for ss.RecvMsg(nil) == nil {
				}
				ss.SendMsg(nil)
				if i == 1 {
					return status.Error(codes.Internal, "x")
				}
				return nil
			})
		}
	}
	run(interceptors{ref.UnaryServerInterceptor(), ref.StreamServerInterceptor()})
	run(interceptors{ours.UnaryServerInterceptor(), ours.StreamServerInterceptor()})
	want, got := series(t, ref), series(t, ours)
	if !slices.Equal(got, want) {
		t.Errorf("series\n%q\nwant the provider's\n%q", got, want)
	}
}

// series lists what c exposes: each family's name, help and type, and each
// series' labels with its value (a histogram: its count).
func series(t *testing.T, c prometheus.Collector) []string {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		out = append(out, fmt.Sprintf("%s %q %s", f.GetName(), f.GetHelp(), f.GetType()))
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			out = append(out, fmt.Sprintf("  %v %v", m.GetLabel(), v))
		}
	}
	return out
}

// fakeStream receives recv messages, then io.EOF; every second send fails.
type fakeStream struct {
	grpc.ServerStream
	recv, sent int
}

func (s *fakeStream) Context() context.Context { return context.Background() }

func (s *fakeStream) RecvMsg(any) error {
	if s.recv == 0 {
		return io.EOF
	}
	s.recv--
	return nil
}

func (s *fakeStream) SendMsg(any) error {
	if s.sent++; s.sent%2 == 0 {
		return errors.New("gone")
	}
	return nil
}

package grpcserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/inflight"
)

// BenchmarkUnaryCall is the cost of one guarded unary call over loopback
// (budget, message read against the minimum rate, the codec's limit), for
// a message of a few bytes and one of 512 KiB.
func BenchmarkUnaryCall(b *testing.B) {
	s := New(slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil,
		Guards{Budget: inflight.New(0, 0), Limits: bodylimit.New()})
	s.RegisterService(&testService, struct{}{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.GRPC.Serve(l)
	defer s.GRPC.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer bench")
	for _, size := range []int{8, 512 << 10} {
		in := wrapperspb.String(strings.Repeat("x", size))
		b.Run(byteSize(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := conn.Invoke(ctx, "/gatehouse.test.v1.TestService/Echo", in, new(wrapperspb.StringValue)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

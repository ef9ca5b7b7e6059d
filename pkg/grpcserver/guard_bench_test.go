package grpcserver

import (
	"bufio"
	"bytes"
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

// BenchmarkMeter is what the meter adds to grpc-go's reading of a
// connection: 1 MiB of DATA frames (16 KiB each, as grpc-go's clients
// send them) read header by payload as grpc-go's framer reads them,
// through the meter (counted to a followed call, whose hold grows) and, for
// comparison, through a plain buffered reader as grpc-go's own.
func BenchmarkMeter(b *testing.B) {
	const frame, frames = 16 << 10, 64
	wire := make([]byte, clientPreface, clientPreface+frames*(frameHeaderLen+frame))
	for range frames {
		wire = append(wire, frame>>16, frame>>8&0xff, frame&0xff, frameData, 0, 0, 0, 0, 1)
		wire = append(wire, make([]byte, frame)...)
	}
	read := func(b *testing.B, r io.Reader) {
		head, payload := make([]byte, frameHeaderLen), make([]byte, frame)
		io.ReadFull(r, make([]byte, clientPreface))
		for range frames {
			if _, err := io.ReadFull(r, head); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(r, payload); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bufio", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			read(b, bufio.NewReaderSize(bytes.NewReader(wire), meterBuffer))
		}
	})
	b.Run("meter", func(b *testing.B) {
		budget := inflight.New(0, 0)
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			m := &meter{r: bufio.NewReaderSize(bytes.NewReader(wire), meterBuffer), preface: clientPreface, streams: map[uint32]*arrival{}}
			a := newArrival()
			m.streams[1] = a
			hold, _ := budget.Acquire(context.Background(), "k", inflight.GrowStep)
			a.admit(hold, inflight.GrowStep)
			read(b, m)
			hold.Release()
		}
	})
}

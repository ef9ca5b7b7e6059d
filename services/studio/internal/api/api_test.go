package api

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

// TestStorageFailureIs500 closes the store under the server: every {id}
// route answers 500 "internal error", never the storage error's text (the
// handlers pass it on; the gRPC server's interceptors answer for it).
func TestStorageFailureIs500(t *testing.T) {
	ctx := context.Background()
	engine, err := boltkv.Open(filepath.Join(t.TempDir(), "studio.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, engine)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gs := grpcserver.New(log, nil, nil, grpcserver.Guards{})
	gs.RegisterService(&studiov1.StudioService_ServiceDesc, New(st, log, nil))
	srv := studiov1.NewStudioServiceClient(gs.Local)
	engine.Close()
	calls := map[string]func() error{
		"delete": func() error {
			_, err := srv.DeleteLlmSettings(ctx, &studiov1.DeleteLlmSettingsRequest{Id: "1"})
			return err
		},
		"get": func() error { _, err := srv.GetLlmSettings(ctx, &studiov1.GetLlmSettingsRequest{Id: "1"}); return err },
		"patch": func() error {
			_, err := srv.UpdateLlmSettings(ctx, &studiov1.UpdateLlmSettingsRequest{Id: "1"})
			return err
		},
	}
	for name, call := range calls {
		st := status.Convert(call())
		code, msgs, ok := rest.Detail(st)
		if st.Code() != codes.Internal || !ok || code != 500 || len(msgs) != 1 || msgs[0] != "internal error" {
			t.Errorf("%s on a closed store: %v %q (REST %d %v), want Internal, 500 internal error", name, st.Code(), st.Message(), code, msgs)
		}
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"1", 1, true}, {"4294967295", 4294967295, true}, {"007", 7, true},
		{"0", 0, false}, {"4294967296", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1e3", 0, false}, {"", 0, false}, {" 1", 0, false},
	}
	for _, tt := range tests {
		if got, ok := parseID(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBearerKey(t *testing.T) {
	tests := []struct {
		in   []string
		key  string
		okay bool
	}{
		{[]string{"Bearer k"}, "k", true}, {[]string{"bearer k"}, "k", true},
		{nil, "", false}, {[]string{"Bearer"}, "", false}, {[]string{"Bearer "}, "", false}, {[]string{"Basic k"}, "", false},
		{[]string{"Bearerk"}, "", false}, {[]string{"Bearer k x"}, "", false}, {[]string{"Bearer k", "Bearer k"}, "", false},
	}
	for _, tt := range tests {
		if key, ok := bearerKey(tt.in); key != tt.key || ok != tt.okay {
			t.Errorf("bearerKey(%q) = %q, %v; want %q, %v", tt.in, key, ok, tt.key, tt.okay)
		}
	}
}

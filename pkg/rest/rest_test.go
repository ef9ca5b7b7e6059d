package rest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

func TestErrorsCarryStatusAndMessages(t *testing.T) {
	err := Errors(codes.InvalidArgument, 422, []string{"Title is too long", "Status is unknown"})
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument || st.Message() != "Title is too long; Status is unknown" {
		t.Fatalf("status %v %q", st.Code(), st.Message())
	}
	code, msgs, ok := Detail(st)
	if !ok || code != 422 || !slices.Equal(msgs, []string{"Title is too long", "Status is unknown"}) {
		t.Fatalf("Detail = %d %v %v", code, msgs, ok)
	}
}

func TestMark(t *testing.T) {
	if Mark(nil) != nil {
		t.Fatal("Mark(nil) is not nil")
	}
	marked := Mark(status.Error(codes.NotFound, "gone"))
	code, msgs, ok := Detail(status.Convert(marked))
	if !ok || code != 404 || !slices.Equal(msgs, []string{"gone"}) {
		t.Fatalf("marked NotFound: %d %v %v", code, msgs, ok)
	}
	already := Error(codes.NotFound, 410, "x")
	if code, _, _ := Detail(status.Convert(Mark(already))); code != 410 {
		t.Fatalf("Mark changed an existing detail to %d", code)
	}
	if _, _, ok := Detail(status.Convert(errors.New("plain"))); ok {
		t.Fatal("a plain error has a detail")
	}
}

func TestStoreError(t *testing.T) {
	tests := []struct {
		err    error
		code   codes.Code
		status int
		msg    string
	}{
		{fmt.Errorf("get: %w", kv.ErrUnavailable), codes.Unavailable, 503, "store unavailable"},
		{fmt.Errorf("%w: etcd takes requests up to 1.5 MiB", kv.ErrTooLarge), codes.ResourceExhausted, 413, "write too large for the store: etcd takes requests up to 1.5 MiB"},
		{kv.ErrConflict, codes.Unavailable, 503, kv.ErrConflict.Error()},
		{context.Canceled, codes.Canceled, 499, "request cancelled"},
	}
	for _, tt := range tests {
		mapped, ok := StoreError(tt.err)
		st := status.Convert(mapped)
		code, msgs, _ := Detail(st)
		if !ok || st.Code() != tt.code || code != tt.status || !slices.Equal(msgs, []string{tt.msg}) {
			t.Errorf("StoreError(%v) = %v %d %q (%v), want %v %d %q", tt.err, st.Code(), code, msgs, ok, tt.code, tt.status, tt.msg)
		}
	}
	if _, ok := StoreError(errors.New("other")); ok {
		t.Error("StoreError mapped an error that is no engine's")
	}
}

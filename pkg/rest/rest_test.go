package rest

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

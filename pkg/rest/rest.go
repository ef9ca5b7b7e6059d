// Package rest is how a gRPC handler speaks to its REST facade: the HTTP
// status of a success, extra response headers, and the HTTP status and
// message list of an error. Handlers set these; pkg/restfacade applies them, and
// gRPC callers simply see ordinary headers and status details.
package rest

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	// StatusKey is the header metadata key carrying a success's HTTP status.
	StatusKey = "x-http-code"
	// HeaderPrefix marks header metadata that the facade sends as an HTTP
	// header, without the prefix ("http-location" → "Location").
	HeaderPrefix = "http-"

	errorDomain = "gatehouse"
	statusMeta  = "http_status"
)

// SetStatus sets the HTTP status the facade answers a success with (201, 204, ...).
func SetStatus(ctx context.Context, code int) {
	grpc.SetHeader(ctx, metadata.Pairs(StatusKey, strconv.Itoa(code)))
}

// SetHeader adds an HTTP response header for the facade to send.
func SetHeader(ctx context.Context, name, value string) {
	grpc.SetHeader(ctx, metadata.Pairs(HeaderPrefix+strings.ToLower(name), value))
}

// Error returns a gRPC status error with message msg that the facade answers
// with httpStatus and msg.
func Error(code codes.Code, httpStatus int, msg string) error {
	return Errors(code, httpStatus, []string{msg})
}

// Errors is Error with several messages (one per problem): the gRPC message
// joins them with "; ", the REST body lists them.
func Errors(code codes.Code, httpStatus int, msgs []string) error {
	st := status.New(code, strings.Join(msgs, "; "))
	info := &errdetails.ErrorInfo{Reason: "HTTP_" + strconv.Itoa(httpStatus), Domain: errorDomain,
		Metadata: map[string]string{statusMeta: strconv.Itoa(httpStatus)}}
	var list errdetails.BadRequest
	for _, m := range msgs {
		list.FieldViolations = append(list.FieldViolations, &errdetails.BadRequest_FieldViolation{Description: m})
	}
	withDetails, err := st.WithDetails(info, &list)
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}

// Mark makes err a status error that carries the facade's detail, keeping
// its code and message; the HTTP status is the code's usual one. Errors
// already carrying the detail are returned as they are.
func Mark(err error) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	if _, _, ok := Detail(st); ok {
		return err
	}
	return Error(st.Code(), HTTPStatus(st.Code()), st.Message())
}

// Detail returns the HTTP status and messages a handler attached to st; ok
// is false for errors that never reached a handler (the facade's own).
func Detail(st *status.Status) (httpStatus int, msgs []string, ok bool) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.GetDomain() == errorDomain {
				httpStatus, _ = strconv.Atoi(d.GetMetadata()[statusMeta])
				ok = httpStatus != 0
			}
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				msgs = append(msgs, v.GetDescription())
			}
		}
	}
	if len(msgs) == 0 {
		msgs = []string{st.Message()}
	}
	return httpStatus, msgs, ok
}

// HTTPStatus is the usual HTTP status of a gRPC code.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted: // a message or a write over a size limit (no rate limits here)
		return http.StatusRequestEntityTooLarge
	case codes.Canceled:
		return 499
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

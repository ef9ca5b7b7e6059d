package app

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// migratePath is the route whose errors have the migrate shape.
const migratePath = "/api/apis/migrate"

func isMigrate(r *http.Request) bool {
	p := r.URL.Path
	return p == migratePath || strings.HasPrefix(p, migratePath+"/")
}

// errorBody is the management error shape {"Status":"Error","Message","Meta":null},
// or under /api/apis/migrate {"ID":"","Message","Meta":null,"Status":"Error"}.
func errorBody(r *http.Request, _ int, msgs []string) any {
	msg := strings.Join(msgs, "; ")
	if isMigrate(r) {
		return struct {
			ID      string `json:"ID"`
			Message string `json:"Message"`
			Meta    any    `json:"Meta"`
			Status  string `json:"Status"`
		}{Message: msg, Status: "Error"}
	}
	return struct {
		Status  string `json:"Status"`
		Message string `json:"Message"`
		Meta    any    `json:"Meta"`
	}{Status: "Error", Message: msg}
}

// requestError answers a body the facade could not decode (malformed JSON,
// wrong types) with the message of its route.
func requestError(r *http.Request, err error) (int, []string) {
	if isMigrate(r) {
		return http.StatusBadRequest, []string{"Malformed request body"}
	}
	// A free-form member over its bounds is named (CONTRACT §0).
	if msg := status.Convert(err).Message(); strings.Contains(msg, jsonstrict.FreeTooLargeText) {
		return http.StatusBadRequest, []string{"Malformed request data: " + msg}
	}
	return http.StatusBadRequest, []string{"Malformed request data."}
}

// marshaler is the facade's codec. API definitions are google.api.HttpBody
// both ways, so a request body reaches the handler as its exact bytes and a
// response body leaves as the handler assembled it; every other message is
// the facade's JSON codec: compact out, strictly typed in. A response_body
// wrapper around an HttpBody answers with the HttpBody's content type.
type marshaler struct{ pb restfacade.JSON }

func newMarshaler(o protojson.MarshalOptions) *marshaler {
	return &marshaler{pb: restfacade.NewJSON(o)}
}

// responseBody is what grpc-gateway's response_body wrappers implement.
type responseBody interface{ XXX_ResponseBody() any }

func (m *marshaler) ContentType(v any) string {
	if rb, ok := v.(responseBody); ok {
		v = rb.XXX_ResponseBody()
	}
	if hb, ok := v.(*httpbody.HttpBody); ok && hb.GetContentType() != "" {
		return hb.GetContentType()
	}
	return "application/json"
}

func (m *marshaler) Marshal(v any) ([]byte, error) {
	if hb, ok := v.(*httpbody.HttpBody); ok {
		return hb.GetData(), nil
	}
	return m.pb.Marshal(v)
}

func (m *marshaler) Unmarshal(data []byte, v any) error {
	return m.NewDecoder(bytes.NewReader(data)).Decode(v)
}

func (m *marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return restfacade.BodyDecoder(r, func(data []byte, v any) error {
		switch t := v.(type) {
		case **httpbody.HttpBody:
			*t = &httpbody.HttpBody{Data: data}
			return nil
		case *httpbody.HttpBody:
			t.Data = data
			return nil
		}
		return m.pb.Unmarshal(data, v)
	})
}

func (m *marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := m.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

func (m *marshaler) Delimiter() []byte { return []byte("\n") }

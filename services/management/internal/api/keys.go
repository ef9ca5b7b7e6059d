package api

import (
	"context"
	"strconv"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/protobuf/types/known/wrapperspb"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/liststream"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
)

// The Keys API (CONTRACT §2 "Keys"): the handlers read the request and
// answer in the Dashboard's shapes; package keys does the work.

var errBasicAuth = badRequest("basic auth users are not supported: issue keys")

// truthy reads a Dashboard flag sent as a query value ("true", "1").
func truthy(v string) bool { return v == "true" || v == "1" }

func keyRef(name, hashed, username string) keys.Ref {
	return keys.Ref{Name: name, Hashed: hashed != "", Username: truthy(username)}
}

// apiKeyRef names a key that must have access to the API.
func apiKeyRef(api, name, hashed, username string) keys.Ref {
	r := keyRef(name, hashed, username)
	r.API, r.ForAPI = api, true
	return r
}

func keyBody(k keys.Key) *httpbody.HttpBody {
	return &httpbody.HttpBody{ContentType: jsonType, Data: k.JSON()}
}

func (s *Server) CreateKey(ctx context.Context, req *managementv1.CreateKeyRequest) (*managementv1.CreateKeyResponse, error) {
	if truthy(req.GetBasicAuth()) {
		return nil, errBasicAuth
	}
	k, err := s.keys.Create(ctx, req.GetBody().GetData(), "")
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.CreateKeyResponse{Body: keyBody(k), KeyId: k.ID, KeyHash: k.Hash}, nil
}

func (s *Server) CreateCustomKey(ctx context.Context, req *managementv1.CreateCustomKeyRequest) (*managementv1.CreateCustomKeyResponse, error) {
	if req.GetKeyId() == "" {
		return nil, badRequest("key_id must not be empty")
	}
	k, err := s.keys.Create(ctx, req.GetBody().GetData(), req.GetKeyId())
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.CreateCustomKeyResponse{Body: keyBody(k), KeyId: k.ID, KeyHash: k.Hash}, nil
}

func (s *Server) PreviewKey(ctx context.Context, req *managementv1.PreviewKeyRequest) (*managementv1.PreviewKeyResponse, error) {
	if !s.keys.Configured() {
		return nil, keys.ErrNotConfigured
	}
	doc, _, err := s.keys.Validate(ctx, req.GetBody().GetData())
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.PreviewKeyResponse{Body: keyBody(keys.Key{Session: doc})}, nil
}

func (s *Server) GetKey(ctx context.Context, req *managementv1.GetKeyRequest) (*managementv1.GetKeyResponse, error) {
	k, err := s.keys.Get(ctx, keyRef(req.GetKeyId(), req.GetHashed(), req.GetUsername()))
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.GetKeyResponse{Body: keyBody(k), KeyHash: k.Hash}, nil
}

func (s *Server) GetAPIKey(ctx context.Context, req *managementv1.GetAPIKeyRequest) (*managementv1.GetAPIKeyResponse, error) {
	k, err := s.keys.Get(ctx, apiKeyRef(req.GetApiId(), req.GetKeyId(), req.GetHashed(), req.GetUsername()))
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.GetAPIKeyResponse{Body: keyBody(k), KeyHash: k.Hash}, nil
}

func (s *Server) UpdateKey(ctx context.Context, req *managementv1.UpdateKeyRequest) (*managementv1.UpdateKeyResponse, error) {
	k, err := s.keys.Update(ctx, keyRef(req.GetKeyId(), req.GetHashed(), req.GetUsername()), req.GetBody().GetData(), req.GetSuppressReset() == "1")
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.UpdateKeyResponse{Body: keyBody(k), KeyHash: k.Hash}, nil
}

func (s *Server) UpdateAPIKey(ctx context.Context, req *managementv1.UpdateAPIKeyRequest) (*managementv1.UpdateAPIKeyResponse, error) {
	k, err := s.keys.Update(ctx, apiKeyRef(req.GetApiId(), req.GetKeyId(), req.GetHashed(), req.GetUsername()), req.GetBody().GetData(), req.GetSuppressReset() == "1")
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.UpdateAPIKeyResponse{Body: keyBody(k), KeyHash: k.Hash}, nil
}

func (s *Server) DeleteKey(ctx context.Context, req *managementv1.DeleteKeyRequest) (*managementv1.DeleteKeyResponse, error) {
	if err := s.keys.Delete(ctx, keyRef(req.GetKeyId(), req.GetHashed(), req.GetUsername())); err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.DeleteKeyResponse{Status: "OK", Message: "Key deleted"}, nil
}

func (s *Server) DeleteAPIKey(ctx context.Context, req *managementv1.DeleteAPIKeyRequest) (*managementv1.DeleteAPIKeyResponse, error) {
	if err := s.keys.Delete(ctx, apiKeyRef(req.GetApiId(), req.GetKeyId(), req.GetHashed(), req.GetUsername())); err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.DeleteAPIKeyResponse{Status: "OK", Message: "Key deleted"}, nil
}

func (s *Server) ListKeys(ctx context.Context, req *managementv1.ListKeysRequest) (*managementv1.ListKeysResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	if limit < 0 && streamKeyList(ctx, s, func(begin func() error, each func(string) error) (int, error) {
		return s.keys.Each(ctx, begin, each)
	}) {
		return &managementv1.ListKeysResponse{}, nil
	}
	hashes, total, err := s.keys.List(ctx, offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.ListKeysResponse{Data: &managementv1.KeyList{Keys: nonNil(hashes)}, Pages: pages(total)}, nil
}

func (s *Server) ListKeysDetailed(ctx context.Context, req *managementv1.ListKeysDetailedRequest) (*managementv1.ListKeysDetailedResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	// every key: written as it is read (a REST request), not held
	if limit < 0 && liststream.Stream(ctx, func(w *liststream.Writer) error {
		w.Write([]byte(`{"keys":[`))
		first := true
		total, err := s.keys.EachDetailed(ctx, req.GetQ(), func(k keys.Key) error {
			if !first {
				w.Write([]byte{','})
			}
			first = false
			_, err := w.Write(k.JSON())
			return err
		})
		if err != nil {
			return s.storeError(err, errInternal)
		}
		_, err = w.Write(strconv.AppendInt([]byte(`],"pages":`), int64(pages(total)), 10))
		if err == nil {
			_, err = w.Write([]byte{'}'})
		}
		return err
	}) {
		return &managementv1.ListKeysDetailedResponse{}, nil
	}
	ks, total, err := s.keys.Detailed(ctx, req.GetQ(), offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	b := []byte(`{"keys":[`)
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k.JSON()...)
	}
	b = append(b, `],"pages":`...)
	b = strconv.AppendInt(b, int64(pages(total)), 10)
	b = append(b, '}')
	return &managementv1.ListKeysDetailedResponse{Body: &httpbody.HttpBody{ContentType: jsonType, Data: b}}, nil
}

func (s *Server) ListAPIKeys(ctx context.Context, req *managementv1.ListAPIKeysRequest) (*managementv1.ListAPIKeysResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	if limit < 0 && streamKeyList(ctx, s, func(begin func() error, each func(string) error) (int, error) {
		return s.keys.EachAPIKey(ctx, req.GetApiId(), "", begin, func(_ int, h string) error { return each(h) })
	}) {
		return &managementv1.ListAPIKeysResponse{}, nil
	}
	hashes, total, err := s.keys.APIKeys(ctx, req.GetApiId(), "", offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.ListAPIKeysResponse{Data: &managementv1.KeyList{Keys: nonNil(hashes)}, Pages: pages(total)}, nil
}

func (s *Server) SearchAPIKeys(ctx context.Context, req *managementv1.SearchAPIKeysRequest) (*managementv1.SearchAPIKeysResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	if limit < 0 && streamKeyList(ctx, s, func(begin func() error, each func(string) error) (int, error) {
		return s.keys.EachAPIKey(ctx, req.GetApiId(), req.GetQ(), begin, func(_ int, h string) error { return each(h) })
	}) {
		return &managementv1.SearchAPIKeysResponse{}, nil
	}
	hashes, total, err := s.keys.APIKeys(ctx, req.GetApiId(), req.GetQ(), offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.SearchAPIKeysResponse{Data: &managementv1.KeyList{Keys: nonNil(hashes)}, Pages: pages(total)}, nil
}

// streamKeyList answers a REST request for every key hash of a list as the
// whole answer reads ({"data":{"keys":[…]},"pages":n}), written as the
// hashes are read: run calls begin once the list is found (before it, an
// error is still a status), then each per hash, and returns the count. It
// reports false for a gRPC call, which gets the whole answer.
func streamKeyList(ctx context.Context, s *Server, run func(begin func() error, each func(hash string) error) (int, error)) bool {
	return liststream.Stream(ctx, func(w *liststream.Writer) error {
		total, err := run(func() error {
			w.Write([]byte(`{"data":`))
			return w.Begin(&managementv1.KeyList{}, "keys", false)
		}, func(h string) error { return w.Item(wrapperspb.String(h)) })
		if err != nil {
			return s.storeError(err, errInternal)
		}
		if err := w.End(); err != nil {
			return err
		}
		_, err = w.Write(strconv.AppendInt([]byte(`,"pages":`), int64(pages(total)), 10))
		if err == nil {
			_, err = w.Write([]byte{'}'})
		}
		return err
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

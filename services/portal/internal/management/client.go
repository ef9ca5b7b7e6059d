// Package management is the portal's client of management's gRPC API
// (consumers.Keys): it checks policy ids and creates and deletes the
// keys of portal credentials. The portal is an internal caller:
// it authenticates with a management API key (--management-key-file) in
// the `authorization` metadata, over TLS when --management-ca-file is given, with a client certificate
// (--management-client-cert-file) for a management that requires one.
//
// Every call has a deadline (CallTimeout). Idempotent calls (reads, a
// delete) are retried up to Attempts times when
// management is unreachable; a key's creation is never retried, since a
// lost answer could leave two keys (reconciliation deletes the one no
// credential records).
package management

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/tlsconfig"
	"github.com/gatehouse/gatehouse/services/portal/internal/consumers"
)

// Call bounds.
const (
	CallTimeout = 5 * time.Second
	Attempts    = 3
	retryPause  = 200 * time.Millisecond
)

// Client calls management; it implements consumers.Keys.
type Client struct {
	conn *grpc.ClientConn
	api  managementv1.ManagementServiceClient
	key  string
}

// TLS is how the portal reaches management over TLS: CAFile verifies
// management's certificate (--management-ca-file), CertFile and KeyFile are
// the portal's client certificate for a management that requires one
// (--grpc-client-ca-file there; --management-client-cert-file and
// --management-client-key-file here). All empty: plain text.
type TLS struct{ CAFile, CertFile, KeyFile string }

// Dial returns a client of the management gRPC API at addr, calling with
// key, over TLS when t names any file (pkg/tlsconfig: each file is read
// again at the next connection after it changed), else plain text. It does
// not connect yet.
func Dial(addr, key string, t TLS) (*Client, error) {
	creds := insecure.NewCredentials()
	if t != (TLS{}) {
		c, err := tlsconfig.ClientCredentials(t.CAFile, t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--management-ca-file, --management-client-cert-file, --management-client-key-file: %w", err)
		}
		creds = c
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("--management-grpc-addr: %w", err)
	}
	return &Client{conn: conn, api: managementv1.NewManagementServiceClient(conn), key: key}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	return metadata.AppendToOutgoingContext(ctx, "authorization", c.key), cancel
}

// retry runs an idempotent call up to Attempts times while management is unreachable.
func (c *Client) retry(ctx context.Context, call func(context.Context) error) error {
	var err error
	for i := range Attempts {
		if i > 0 {
			select {
			case <-time.After(retryPause * time.Duration(i)):
			case <-ctx.Done():
				return err
			}
		}
		cctx, cancel := c.ctx(ctx)
		err = call(cctx)
		cancel()
		if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
			return err
		}
	}
	return err
}

func jsonBody(v any) (*httpbody.HttpBody, error) {
	raw, err := json.Marshal(v)
	return &httpbody.HttpBody{ContentType: "application/json", Data: raw}, err
}

// MissingPolicies implements consumers.Keys with GetPolicy.
func (c *Client) MissingPolicies(ctx context.Context, ids []string) ([]string, error) {
	var missing []string
	for _, id := range ids {
		err := c.retry(ctx, func(ctx context.Context) error {
			_, err := c.api.GetPolicy(ctx, &managementv1.GetPolicyRequest{PolicyId: id})
			return err
		})
		switch status.Code(err) {
		case codes.OK:
		case codes.NotFound, codes.InvalidArgument:
			missing = append(missing, id)
		default:
			return nil, err
		}
	}
	return missing, nil
}

// session is the part of Tyk's SessionState a portal key sets.
type session struct {
	ApplyPolicies []string          `json:"apply_policies"`
	Alias         string            `json:"alias"`
	MetaData      map[string]string `json:"meta_data"`
}

// CreateKey implements consumers.Keys (not retried).
func (c *Client) CreateKey(ctx context.Context, spec consumers.KeySpec) (string, string, error) {
	body, err := jsonBody(session{ApplyPolicies: spec.Policies, Alias: spec.Alias, MetaData: spec.Meta})
	if err != nil {
		return "", "", err
	}
	cctx, cancel := c.ctx(ctx)
	defer cancel()
	resp, err := c.api.CreateKey(cctx, &managementv1.CreateKeyRequest{Body: body})
	if err != nil {
		return "", "", err
	}
	if resp.GetKeyId() == "" || resp.GetKeyHash() == "" {
		return "", "", errors.New("management answered a key without its id or hash")
	}
	return resp.GetKeyId(), resp.GetKeyHash(), nil
}

// DeleteKey implements consumers.Keys; a key management does not have is no error.
func (c *Client) DeleteKey(ctx context.Context, hash string) error {
	err := c.retry(ctx, func(ctx context.Context) error {
		_, err := c.api.DeleteKey(ctx, &managementv1.DeleteKeyRequest{KeyId: hash})
		return err
	})
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}

// keyData is the Dashboard's KeyData: the session under data.
type keyData struct {
	KeyID   string `json:"key_id"`
	KeyHash string `json:"key_hash"`
	Data    struct {
		MetaData      map[string]any `json:"meta_data"`
		ApplyPolicies []string       `json:"apply_policies"`
		AccessRights  map[string]any `json:"access_rights"`
	} `json:"data"`
}

// PortalKeys implements consumers.Keys. ListKeysDetailed answers
// management's records of the keys it issued (hash, alias, APIs,
// policies), which carry no meta_data; a key that could be a portal key
// (policies only, as the portal asks for) is read with GetKey, whose
// session has it.
func (c *Client) PortalKeys(ctx context.Context) ([]consumers.PortalKey, error) {
	var list struct {
		Keys []keyData `json:"keys"`
	}
	all := int64(-1)
	err := c.retry(ctx, func(ctx context.Context) error {
		resp, err := c.api.ListKeysDetailed(ctx, &managementv1.ListKeysDetailedRequest{P: &all})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.GetBody().GetData(), &list)
	})
	if err != nil {
		return nil, err
	}
	var out []consumers.PortalKey
	for _, k := range list.Keys {
		hash := k.KeyHash
		if hash == "" {
			hash = k.KeyID
		}
		meta := k.Data.MetaData
		if meta == nil && len(k.Data.ApplyPolicies) > 0 && len(k.Data.AccessRights) == 0 {
			var full keyData
			err := c.retry(ctx, func(ctx context.Context) error {
				resp, err := c.api.GetKey(ctx, &managementv1.GetKeyRequest{KeyId: hash})
				if err != nil {
					return err
				}
				return json.Unmarshal(resp.GetBody().GetData(), &full)
			})
			if status.Code(err) == codes.NotFound {
				continue
			}
			if err != nil {
				return nil, err
			}
			meta = full.Data.MetaData
		}
		app, _ := meta["portal_app_id"].(string)
		id, err := strconv.ParseUint(app, 10, 32)
		if err != nil {
			continue
		}
		out = append(out, consumers.PortalKey{Hash: hash, AppID: uint32(id)})
	}
	return out, nil
}

var _ consumers.Keys = (*Client)(nil)

// Package gatewayapi calls the Tyk Gateways' own API (their /tyk/ routes,
// authorized by the gateways' `secret`), the way the Tyk Dashboard does
// through its tyk_api_config: management issues, reads, updates and
// deletes keys there, so that the gateways keep sessions in their own
// format and hashing (CONTRACT §2 "Keys").
//
// One http.Client with timeouts serves every call. The secret travels only
// in the x-tyk-authorization header; neither it nor a key is ever put in an
// error or a log line (a key appears in a URL path only when it is being
// created as a custom key, and url errors are never passed on).
package gatewayapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Timeouts of every call: a gateway that does not answer within them is
// unreachable.
const (
	dialTimeout = 3 * time.Second
	callTimeout = 10 * time.Second
	// maxAnswer bounds what is read of an answer (a session is a few KiB).
	maxAnswer = 4 << 20
)

// ErrUnreachable is a call the gateway did not answer: a connection
// refused, a timeout, or an answer that is not the gateway API's.
var ErrUnreachable = errors.New("the gateway API did not answer")

// Refusal is the gateway's own refusal of a call: its status and message.
type Refusal struct {
	Status  int
	Message string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("gateway refused (%d): %s", r.Status, r.Message)
}

// Client calls one gateway API (one gateway, or a Service in front of
// several that share Redis).
type Client struct {
	base   *url.URL
	secret string
	http   *http.Client
}

// New returns a client of the gateway API at baseURL (http:// or https://,
// its /tyk/ routes below it) with the gateways' secret.
func New(baseURL, secret string) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("gateway API URL must be an http:// or https:// URL")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: callTimeout,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Client{base: u, secret: secret, http: &http.Client{Transport: tr, Timeout: callTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// Created is the gateway's answer to a key it created.
type Created struct {
	Key  string // the key itself
	Hash string // its hash: the name of every later call
}

// Create has the gateway generate a key for session (POST /tyk/keys).
func (c *Client) Create(ctx context.Context, session []byte) (Created, error) {
	return c.create(ctx, "/tyk/keys", session)
}

// CreateCustom creates the key the caller chose (POST /tyk/keys/{key}).
// The gateway may answer it in its own token format: Created.Key is the
// key to use.
func (c *Client) CreateCustom(ctx context.Context, key string, session []byte) (Created, error) {
	return c.create(ctx, "/tyk/keys/"+url.PathEscape(key), session)
}

func (c *Client) create(ctx context.Context, path string, session []byte) (Created, error) {
	var ans struct {
		Key     string `json:"key"`
		KeyHash string `json:"key_hash"`
	}
	if err := c.call(ctx, http.MethodPost, path, nil, session, &ans); err != nil {
		return Created{}, err
	}
	if ans.Key == "" {
		return Created{}, ErrUnreachable
	}
	if ans.KeyHash == "" {
		ans.KeyHash = Hash(ans.Key)
	}
	return Created{Key: ans.Key, Hash: ans.KeyHash}, nil
}

// Get reads the session of the key with that hash (GET /tyk/keys/{hash}?hashed=true).
func (c *Client) Get(ctx context.Context, hash string) ([]byte, error) {
	var raw json.RawMessage
	err := c.call(ctx, http.MethodGet, "/tyk/keys/"+url.PathEscape(hash), hashed(), nil, &raw)
	return raw, err
}

// Update replaces the session of the key with that hash (PUT
// /tyk/keys/{hash}?hashed=true); suppressReset keeps the live quota.
func (c *Client) Update(ctx context.Context, hash string, session []byte, suppressReset bool) error {
	q := hashed()
	if suppressReset {
		q.Set("suppress_reset", "1")
	}
	return c.call(ctx, http.MethodPut, "/tyk/keys/"+url.PathEscape(hash), q, session, nil)
}

// Delete removes the key with that hash from every API (DELETE
// /tyk/keys/{hash}?hashed=true). A key the gateway does not hold is a
// Refusal with status 404.
func (c *Client) Delete(ctx context.Context, hash string) error {
	return c.call(ctx, http.MethodDelete, "/tyk/keys/"+url.PathEscape(hash), hashed(), nil, nil)
}

func hashed() url.Values { return url.Values{"hashed": {"true"}} }

// call sends one request and decodes a 200 answer into out (nil: ignored).
// Any other status is a Refusal carrying the gateway's message.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body []byte, out any) error {
	target := c.base.String() + path // path's parts are escaped; the base has no query
	if q != nil {
		target += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return ErrUnreachable
	}
	req.Header.Set("x-tyk-authorization", c.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrUnreachable // never the url.Error: its text holds the URL
	}
	defer resp.Body.Close()
	ans, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(ans) > maxAnswer {
		return ErrUnreachable
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(ans, &e) != nil || e.Message == "" {
			if resp.StatusCode >= 500 || resp.StatusCode < 400 {
				return ErrUnreachable // not the gateway API's answer (a proxy's page, a redirect)
			}
			e.Message = http.StatusText(resp.StatusCode)
		}
		return &Refusal{Status: resp.StatusCode, Message: e.Message}
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		if !json.Valid(ans) {
			return ErrUnreachable
		}
		*raw = bytes.TrimSpace(ans)
		return nil
	}
	if json.Unmarshal(ans, out) != nil {
		return ErrUnreachable
	}
	return nil
}

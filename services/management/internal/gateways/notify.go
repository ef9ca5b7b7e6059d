package gateways

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Channel is the Redis pub/sub channel Tyk Gateways listen on.
const Channel = "tyk.cluster.notifications"

// algorithmSHA256 is Go's crypto.SHA256, the number a gateway reads as "the
// signature is hex SHA-256 of command + payload + node secret".
const algorithmSHA256 = 5

// Pacing of notifications: changes committed within Gather of each other
// go out together, and one round of notifications leaves at most every
// MinGap, so a burst (a 10,000-API migration) sends one round per MinGap
// while it lasts, and every change is announced within about MinGap of its
// commit. While Redis does not answer, a round is retried after a backoff
// that grows from RetryMin to RetryMax.
var (
	Gather   = 50 * time.Millisecond
	MinGap   = 900 * time.Millisecond
	RetryMin = 200 * time.Millisecond
	RetryMax = 5 * time.Second
)

// The commands a gateway reloads on, by the change they announce.
var commands = []struct {
	change store.Change
	name   string
}{
	{store.APIAdded, "ApiAdded"},
	{store.APIUpdated, "ApiUpdated"},
	{store.APIRemoved, "ApiRemoved"},
	{store.PolicyChanged, "PolicyChanged"},
}

// Notification is the message a gateway decodes (its redis_signals.go).
type Notification struct {
	Command   string `json:"command"`
	Payload   string `json:"payload"`
	Signature string `json:"signature"`
	Algorithm int    `json:"algorithm"`
}

// Sign signs a notification as a gateway verifies it: hex SHA-256 of
// command + payload + node secret, algorithm 5.
func Sign(n Notification, secret string) Notification {
	sum := sha256.Sum256([]byte(n.Command + n.Payload + secret))
	n.Signature, n.Algorithm = hex.EncodeToString(sum[:]), algorithmSHA256
	return n
}

// Publisher publishes one message on a channel (a Redis client).
type Publisher interface {
	Publish(ctx context.Context, channel string, message []byte) error
}

// RedisPublisher publishes with go-redis.
type RedisPublisher struct{ Client redis.UniversalClient }

// Publish sends message on channel.
func (p RedisPublisher) Publish(ctx context.Context, channel string, message []byte) error {
	return p.Client.Publish(ctx, channel, message).Err()
}

// NewRedis connects to the gateways' Redis: rawURL is redis:// or rediss://
// (host, port, database); password, when not empty, replaces the URL's. A
// URL that carries a password is refused (the flag is a command-line
// value, and CONTRACT §0 keeps secrets off command lines), and no error
// repeats the URL, so that a mistyped one cannot put a secret in a log.
func NewRedis(rawURL, password string) (*redis.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("--gateway-redis: not a valid URL")
	}
	if _, set := u.User.Password(); set {
		return nil, errors.New("--gateway-redis: the URL carries a password; give it in GATEWAY_REDIS_PASSWORD (or GATEWAY_REDIS_PASSWORD_FILE) instead")
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--gateway-redis: %w", err)
	}
	if password != "" {
		opt.Password = password
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	opt.MaxRetries = -1 // the notifier retries itself
	return redis.NewClient(opt), nil
}

// Notifier announces committed changes to gateways. Changed never blocks
// and never fails, so no write waits for Redis; Run publishes.
type Notifier struct {
	pub    Publisher
	secret string
	log    *slog.Logger

	mu      sync.Mutex
	pending store.Change
	wake    chan struct{}
}

// NewNotifier returns a notifier publishing with pub, signing with secret.
func NewNotifier(pub Publisher, secret string, log *slog.Logger) *Notifier {
	metrics.NotificationsEnabled()
	return &Notifier{pub: pub, secret: secret, log: log.With("component", "gateway-notifier"), wake: make(chan struct{}, 1)}
}

// Changed records a committed change (store.Store.OnCommit).
func (n *Notifier) Changed(c store.Change) {
	n.mu.Lock()
	n.pending |= c
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *Notifier) take() store.Change {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.pending
	n.pending = 0
	return c
}

// giveBack returns changes whose round failed, for the next attempt.
func (n *Notifier) giveBack(c store.Change) {
	n.mu.Lock()
	n.pending |= c
	n.mu.Unlock()
}

// Run publishes rounds until ctx ends (changes still pending then are
// dropped: gateways reload when they next register).
func (n *Notifier) Run(ctx context.Context) {
	backoff := RetryMin
	retrying := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		if !sleep(ctx, Gather) {
			return
		}
		c := n.take()
		if c == 0 {
			continue
		}
		if err := n.round(ctx, c, retrying); err != nil {
			n.giveBack(c)
			if !retrying {
				n.log.Warn("gateway reload notification not published; retrying until Redis answers", "err", err)
			}
			retrying = true
			n.Changed(0) // wake again after the backoff
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, RetryMax)
			continue
		}
		if retrying {
			n.log.Info("gateway reload notifications published again")
		}
		retrying, backoff = false, RetryMin
		if !sleep(ctx, MinGap-Gather) {
			return
		}
	}
}

// command names what a round announces: the one kind of change pending,
// or ApiUpdated when several are (a gateway reloads everything, APIs and
// policies, on any of them; one message a round halves what a long burst
// sends).
func command(c store.Change) string {
	for _, cmd := range commands {
		if c == cmd.change {
			return cmd.name
		}
	}
	return "ApiUpdated"
}

// round publishes one notification for the changes in c.
func (n *Notifier) round(ctx context.Context, c store.Change, retry bool) error {
	msg, err := json.Marshal(Sign(Notification{Command: command(c), Payload: "gatehouse"}, n.secret))
	if err != nil {
		return err
	}
	if retry {
		metrics.CountNotification(metrics.Retried)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := n.pub.Publish(pctx, Channel, msg); err != nil {
		metrics.CountNotification(metrics.Failed)
		return err
	}
	metrics.CountNotification(metrics.Published)
	return nil
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

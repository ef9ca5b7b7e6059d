// Package etcdtest starts real etcd members inside the test process
// (go.etcd.io/etcd/server/v3/embed) on free loopback ports: one member, or a
// cluster whose members tests stop and restart to cause leader changes and
// quorum loss.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gatehouse/gatehouse/pkg/freeport"
)

// Cluster is a running set of members.
type Cluster struct {
	t       testing.TB
	mu      sync.Mutex
	members []*member
	tls     *TLSFiles
}

// TLSFiles are PEM files of a test certificate authority, the members'
// server certificate (for 127.0.0.1) and a client certificate it signed.
type TLSFiles struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

type member struct {
	name, dir          string
	clientURL, peerURL url.URL
	initialCluster     string
	token              string
	etcd               *embed.Etcd // nil while stopped
}

// Start runs a cluster of size members on 127.0.0.1 and waits until it
// serves; the members stop when the test ends.
func Start(t testing.TB, size int) *Cluster {
	t.Helper()
	return start(t, size, nil)
}

// StartTLS runs one member that serves clients over TLS only and requires a
// client certificate signed by files.CA.
func StartTLS(t testing.TB, files TLSFiles) *Cluster {
	t.Helper()
	return start(t, 1, &files)
}

func start(t testing.TB, size int, tlsFiles *TLSFiles) *Cluster {
	t.Helper()
	c := &Cluster{t: t, tls: tlsFiles}
	t.Cleanup(c.Close)
	// A port found free can be taken by another test before etcd binds it;
	// then the whole cluster gets new ports (its members name each other's).
	for attempt := 1; ; attempt++ {
		err := c.startAll(size)
		if err == nil {
			break
		}
		c.Close()
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatal(err)
		}
	}
	for i := range c.members {
		c.waitReady(i)
	}
	return c
}

// startAll starts size new members on new ports and data directories.
func (c *Cluster) startAll(size int) error {
	scheme := "http"
	if c.tls != nil {
		scheme = "https"
	}
	var peers []string
	token := fmt.Sprintf("gatehouse-test-%d", time.Now().UnixNano())
	c.members = nil
	for i := range size {
		m := &member{
			name:      fmt.Sprintf("m%d", i),
			dir:       filepath.Join(c.t.TempDir(), "etcd"),
			clientURL: url.URL{Scheme: scheme, Host: freeport.Addr(c.t)},
			peerURL:   url.URL{Scheme: "http", Host: freeport.Addr(c.t)},
			token:     token,
		}
		peers = append(peers, m.name+"="+m.peerURL.String())
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.initialCluster = strings.Join(peers, ",")
	}
	for i := range c.members {
		if err := c.startMember(i); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	// A restarted member keeps its ports; one taken meanwhile is usually
	// freed again soon.
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err = c.startMember(i)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) startMember(i int) error {
	m := c.members[i]
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = m.dir
	cfg.ListenClientUrls = []url.URL{m.clientURL}
	cfg.AdvertiseClientUrls = []url.URL{m.clientURL}
	cfg.ListenPeerUrls = []url.URL{m.peerURL}
	cfg.AdvertisePeerUrls = []url.URL{m.peerURL}
	cfg.InitialCluster = m.initialCluster
	cfg.InitialClusterToken = m.token
	if c.tls != nil {
		cfg.ClientTLSInfo = transport.TLSInfo{
			CertFile: c.tls.ServerCert, KeyFile: c.tls.ServerKey,
			TrustedCAFile: c.tls.CA, ClientCertAuth: true,
		}
	}
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(filepath.Dir(m.dir), "etcd.log")}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start etcd member %s: %w", m.name, err)
	}
	c.mu.Lock()
	m.etcd = e
	c.mu.Unlock()
	return nil
}

func (c *Cluster) waitReady(i int) {
	c.t.Helper()
	m := c.members[i]
	select {
	case <-m.etcd.Server.ReadyNotify():
	case err := <-m.etcd.Err():
		c.t.Fatalf("etcd member %s: %v", m.name, err)
	case <-time.After(60 * time.Second):
		c.t.Fatalf("etcd member %s not ready after 60 s", m.name)
	}
}

// Endpoints lists every member's client URL, stopped members included (a
// client is given all of them, as in production).
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.clientURL.String())
	}
	return out
}

// Stop stops member i (its data stays for Restart).
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	e := c.members[i].etcd
	c.members[i].etcd = nil
	c.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Restart starts a stopped member i again on its data and ports; it does
// not wait for the member to rejoin (that needs a quorum).
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.start(i)
}

// WaitReady waits until member i has joined its cluster.
func (c *Cluster) WaitReady(i int) { c.t.Helper(); c.waitReady(i) }

// Leader returns the index of the running member that is leader now, after
// waiting up to 10 s for there to be one.
func (c *Cluster) Leader() int {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for i, m := range c.members {
			if m.etcd != nil && m.etcd.Server.Leader() == m.etcd.Server.MemberID() {
				c.mu.Unlock()
				return i
			}
		}
		c.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatal("no etcd leader after 10 s")
	return -1
}

// Close stops every member.
func (c *Cluster) Close() {
	for i := range c.members {
		c.Stop(i)
	}
}

// SetNoSpace raises (on) or disarms (off) the NOSPACE alarm of the leader,
// as etcd raises it when its database passes --quota-backend-bytes: every
// write is then refused ("database space exceeded") while reads work.
func (c *Cluster) SetNoSpace(on bool) {
	c.t.Helper()
	c.mu.Lock()
	m := c.members[0]
	c.mu.Unlock()
	action := pb.AlarmRequest_DEACTIVATE
	if on {
		action = pb.AlarmRequest_ACTIVATE
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := m.etcd.Server.Alarm(ctx, &pb.AlarmRequest{Action: action, MemberID: uint64(m.etcd.Server.MemberID()), Alarm: pb.AlarmType_NOSPACE})
	if err != nil {
		c.t.Fatalf("etcd alarm: %v", err)
	}
}

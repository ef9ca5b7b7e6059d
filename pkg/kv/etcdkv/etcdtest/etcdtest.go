// Package etcdtest starts real etcd members inside the test process
// (go.etcd.io/etcd/server/v3/embed) on free loopback ports: one member, or a
// cluster whose members tests stop and restart to cause leader changes and
// quorum loss.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
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
	scheme := "http"
	if tlsFiles != nil {
		scheme = "https"
	}
	var peers []string
	token := fmt.Sprintf("gatehouse-test-%d", time.Now().UnixNano())
	for i := range size {
		m := &member{
			name:      fmt.Sprintf("m%d", i),
			dir:       filepath.Join(t.TempDir(), "etcd"),
			clientURL: url.URL{Scheme: scheme, Host: freeAddr(t)},
			peerURL:   url.URL{Scheme: "http", Host: freeAddr(t)},
			token:     token,
		}
		peers = append(peers, m.name+"="+m.peerURL.String())
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.initialCluster = strings.Join(peers, ",")
	}
	t.Cleanup(c.Close)
	for i := range c.members {
		c.start(i)
	}
	for i := range c.members {
		c.waitReady(i)
	}
	return c
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (c *Cluster) start(i int) {
	c.t.Helper()
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
		c.t.Fatalf("start etcd member %s: %v", m.name, err)
	}
	c.mu.Lock()
	m.etcd = e
	c.mu.Unlock()
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

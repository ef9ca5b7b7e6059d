package replicas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/freeport"
)

// repoRoot is the workspace root (go.work), two folders up.
const repoRoot = "../.."

var (
	buildOnce sync.Once
	binDir    string
	bins      map[string]string
	etcdBin   string
	buildErr  error
)

// binaries builds the services (as the Dockerfile does) and the etcd server
// (tools/etcd, the module outside go.work that `make etcd` builds into
// .bin/etcd; reused when it is there) once per test binary.
func binaries(t *testing.T) (map[string]string, string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "gatehouse-replicas-bin-")
		if buildErr != nil {
			return
		}
		bins, buildErr = binproc.Build(repoRoot, binDir, []string{"studio", "management", "portal"})
		if buildErr != nil {
			return
		}
		etcdBin, buildErr = filepath.Abs(filepath.Join(repoRoot, ".bin", "etcd"))
		if buildErr != nil {
			return
		}
		if _, err := os.Stat(etcdBin); err != nil {
			cmd := exec.Command("go", "-C", filepath.Join(repoRoot, "tools", "etcd"), "build", "-o", etcdBin, ".")
			cmd.Env = append(os.Environ(), "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("build etcd: %v\n%s", err, out)
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bins, etcdBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// member is one etcd server process of a cluster.
type member struct {
	name, dir          string
	clientURL, peerURL string
	cmd                *exec.Cmd
	exited             chan struct{}
	log                *bytes.Buffer
}

// cluster is a 3-member etcd cluster of real etcd processes on loopback.
type cluster struct {
	t       *testing.T
	bin     string
	members []*member
	initial string
}

func startCluster(t *testing.T, bin string, size int) *cluster {
	t.Helper()
	c := &cluster{t: t, bin: bin}
	var peers []string
	for i := range size {
		m := &member{
			name:      fmt.Sprintf("m%d", i),
			dir:       filepath.Join(t.TempDir(), "data"),
			clientURL: "http://" + freeport.Addr(t),
			peerURL:   "http://" + freeport.Addr(t),
		}
		peers = append(peers, m.name+"="+m.peerURL)
		c.members = append(c.members, m)
	}
	c.initial = strings.Join(peers, ",")
	t.Cleanup(func() {
		for i := range c.members {
			c.stop(i)
		}
		if t.Failed() {
			for _, m := range c.members {
				t.Logf("etcd %s log tail:\n%s", m.name, tail(m.log.String(), 10))
			}
		}
	})
	for i := range c.members {
		c.start(i)
	}
	for i := range c.members {
		c.waitHealthy(i)
	}
	return c
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// start runs member i on its data folder (a restart keeps the data).
func (c *cluster) start(i int) {
	c.t.Helper()
	m := c.members[i]
	m.log = &bytes.Buffer{}
	m.cmd = exec.Command(c.bin, "--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
		"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
		"--initial-cluster", c.initial, "--initial-cluster-token", "gatehouse-replicas",
		"--log-level", "error")
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(m.cmd, m.exited)
}

// stop kills member i (SIGKILL: a crash, not a goodbye) and waits for it.
func (c *cluster) stop(i int) {
	m := c.members[i]
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Kill()
	<-m.exited
	m.cmd = nil
}

// status asks member i for its status through etcd's JSON gateway.
func (c *cluster) status(i int) (memberID, leader string, err error) {
	client := http.Client{Timeout: 2 * time.Second}
	res, err := client.Post(c.members[i].clientURL+"/v3/maintenance/status", "application/json", strings.NewReader("{}"))
	if err != nil {
		return "", "", err
	}
	defer res.Body.Close()
	var st struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
		Leader string `json:"leader"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return "", "", err
	}
	return st.Header.MemberID, st.Leader, nil
}

func (c *cluster) waitHealthy(i int) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, leader, err := c.status(i); err == nil && leader != "" && leader != "0" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("etcd member %d has no leader after 30 s; log:\n%s", i, tail(c.members[i].log.String(), 10))
}

// leader is the index of the member that leads now.
func (c *cluster) leader() int {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range c.members {
			if m.cmd == nil {
				continue
			}
			if id, leader, err := c.status(i); err == nil && id != "" && id == leader {
				return i
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatal("no etcd leader after 15 s")
	return -1
}

func (c *cluster) endpoints() string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.clientURL)
	}
	return strings.Join(eps, ",")
}

package deploy

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var services = []string{"studio", "management", "portal"}

// kustomizations lists every buildable kustomization in this folder.
// TestEveryKustomizationIsChecked fails when a new one is not listed here.
type kustomizationCase struct {
	dir      string
	opts     checkOptions
	services []string // services whose StatefulSet, Service and ServiceAccount it must hold
	overlay  bool
	// replicated: the services are Deployments on an etcd StatefulSet
	// instead of bbolt StatefulSets.
	replicated bool
	// scraped: every service's pods carry the Prometheus scrape annotations.
	scraped bool
}

var kustomizations = []kustomizationCase{
	{dir: "base", services: services},
	{dir: "base/studio", services: []string{"studio"}},
	{dir: "base/management", services: []string{"management"}},
	{dir: "base/portal", services: []string{"portal"}},
	{dir: "overlays/dev", opts: checkOptions{requireNetworkPolicies: true}, services: services, overlay: true},
	{dir: "overlays/prod", opts: checkOptions{requireNetworkPolicies: true}, services: services, overlay: true, scraped: true},
	{dir: "overlays/ha", opts: checkOptions{requireNetworkPolicies: true, requireTLS: true}, services: services, overlay: true, replicated: true},
}

func TestManifests(t *testing.T) {
	for _, k := range kustomizations {
		t.Run(k.dir, func(t *testing.T) {
			t.Parallel()
			rs, err := render(k.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range checkAll(objectsOf(rs), k.opts) {
				t.Error(f)
			}
			workloadKind := "StatefulSet"
			if k.replicated {
				workloadKind = "Deployment"
				for _, kind := range []string{"StatefulSet", "Service", "PodDisruptionBudget"} {
					if !hasObject(rs, kind, "etcd") {
						t.Errorf("no %s etcd in the build", kind)
					}
				}
			}
			for _, svc := range k.services {
				for _, kind := range []string{workloadKind, "Service", "ServiceAccount"} {
					if !hasObject(rs, kind, svc) {
						t.Errorf("no %s %s in the build", kind, svc)
					}
				}
			}
			if k.overlay {
				checkOverlay(t, rs)
			}
			checkObservability(t, rs, k.scraped)
		})
	}
}

func hasObject(rs []rendered, kind, name string) bool {
	return slices.ContainsFunc(rs, func(r rendered) bool {
		m, err := meta.Accessor(r.obj)
		return err == nil && r.obj.GetObjectKind().GroupVersionKind().Kind == kind && m.GetName() == name
	})
}

// checkOverlay: an overlay puts everything into its own namespace, which
// enforces the "restricted" Pod Security Standard the pods are written for.
func checkOverlay(t *testing.T, rs []rendered) {
	t.Helper()
	var namespaces []*corev1.Namespace
	for _, r := range rs {
		if ns, ok := r.obj.(*corev1.Namespace); ok {
			namespaces = append(namespaces, ns)
		}
	}
	if len(namespaces) != 1 {
		t.Fatalf("got %d Namespace objects, want 1", len(namespaces))
	}
	ns := namespaces[0]
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("Namespace %s: pod-security enforce label = %q, want restricted", ns.Name, got)
	}
	for _, r := range rs {
		if _, ok := r.obj.(*corev1.Namespace); ok {
			continue
		}
		m, err := meta.Accessor(r.obj)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetNamespace() != ns.Name {
			t.Errorf("%s: namespace %q, want %q", r.id, m.GetNamespace(), ns.Name)
		}
	}
	for _, r := range rs {
		var pod corev1.PodSpec
		switch o := r.obj.(type) {
		case *appsv1.StatefulSet:
			pod = o.Spec.Template.Spec
		case *appsv1.Deployment:
			pod = o.Spec.Template.Spec
		}
		{
			for _, c := range pod.Containers {
				if strings.HasPrefix(c.Image, "gatehouse/") && !strings.HasSuffix(c.Image, ":dev") {
					t.Errorf("%s: image %s: overlays set the release tag", r.id, c.Image)
				}
			}
		}
	}
}

// checkObservability: every Gatehouse container is ready when GET /readyz
// on its HTTP port answers (503 while its store does not); with scraped, its
// pods carry the Prometheus annotations naming GET /metrics on that port.
func checkObservability(t *testing.T, rs []rendered, scraped bool) {
	t.Helper()
	for _, r := range rs {
		var tmpl corev1.PodTemplateSpec
		switch o := r.obj.(type) {
		case *appsv1.StatefulSet:
			tmpl = o.Spec.Template
		case *appsv1.Deployment:
			tmpl = o.Spec.Template
		default:
			continue
		}
		for _, c := range tmpl.Spec.Containers {
			if !isGatehouse(c) {
				continue
			}
			http, ok := containerPort(c, intstr.FromString("http"), 0)
			if !ok {
				t.Errorf("%s: container %s declares no port named http", r.id, c.Name)
				continue
			}
			if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port != intstr.FromString("http") {
				t.Errorf("%s: container %s: readiness is not GET /readyz on the http port", r.id, c.Name)
			}
			if !scraped {
				continue
			}
			want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/path": "/metrics", "prometheus.io/port": strconv.Itoa(int(http.ContainerPort))}
			for k, v := range want {
				if got := tmpl.Annotations[k]; got != v {
					t.Errorf("%s: pod annotation %s = %q, want %q", r.id, k, got, v)
				}
			}
		}
	}
}

// TestEveryKustomizationIsChecked keeps the kustomizations table complete.
func TestEveryKustomizationIsChecked(t *testing.T) {
	var found []string
	for _, root := range []string{"base", "overlays"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "kustomization.yaml" {
				found = append(found, filepath.ToSlash(filepath.Dir(p)))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range found {
		if !slices.ContainsFunc(kustomizations, func(k kustomizationCase) bool { return k.dir == dir }) {
			t.Errorf("kustomization %s is not in the kustomizations table of manifests_test.go", dir)
		}
	}
}

// TestNoCommittedSecrets scans the files themselves, not only what they render
// to: no Secret with values, no secretGenerator literals, no literal token env.
func TestNoCommittedSecrets(t *testing.T) {
	found, err := scanForSecretLiterals(".", func(p string) bool { return p == "testdata" })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestKubectlAgrees renders the overlays with kubectl (the command README.md
// documents; it bundles its own kustomize) and expects the same objects.
func TestKubectlAgrees(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	for _, k := range kustomizations {
		t.Run(k.dir, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(kubectl, "kustomize", k.dir).Output()
			if err != nil {
				t.Fatalf("kubectl kustomize %s: %v", k.dir, err)
			}
			var fromKubectl []rendered
			for doc := range bytes.SplitSeq(out, []byte("\n---\n")) {
				obj, _, err := strictDecoder.Decode(doc, nil, nil)
				if err != nil {
					t.Fatalf("decode kubectl output: %v\n%s", err, doc)
				}
				fromKubectl = append(fromKubectl, rendered{obj: obj})
			}
			ours, err := render(k.dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ours) != len(fromKubectl) {
				t.Fatalf("krusty rendered %d objects, kubectl %d", len(ours), len(fromKubectl))
			}
			for _, o := range ours {
				if !slices.ContainsFunc(fromKubectl, func(k rendered) bool { return equality.Semantic.DeepEqual(o.obj, k.obj) }) {
					t.Errorf("%s differs between krusty and kubectl kustomize", o.id)
				}
			}
		})
	}
}

func TestMain(m *testing.M) {
	// Paths in the tests are relative to this folder, which `go test` makes the
	// working directory; say so loudly if that ever changes.
	if _, err := os.Stat("base/kustomization.yaml"); err != nil {
		panic("deploy tests must run in the deploy folder: " + err.Error())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

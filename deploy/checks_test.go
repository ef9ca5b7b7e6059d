package deploy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The rules the manifests must follow. Each check has an ID, and every ID has at
// least one deliberately broken manifest under testdata/broken that it catches
// (TestChecksCatchBrokenManifests).
const (
	checkSelector       = "selector"        // workload selector matches its pod template
	checkService        = "service"         // Service selects a workload, named http+grpc ports that exist
	checkGoverning      = "governing"       // StatefulSet serviceName is a headless Service selecting it
	checkProbes         = "probes"          // gRPC readiness+liveness, probe ports declared
	checkResources      = "resources"       // requests and limits for cpu and memory
	checkSecurity       = "security"        // pod and container security context
	checkServiceAccount = "service-account" // own ServiceAccount, no API token mounted
	checkSecrets        = "secrets"         // no secret values in manifests; token via secretKeyRef
	checkStatefulSet    = "statefulset"     // bbolt: StatefulSet, 1 replica, DB_PATH on a claim
	checkGrace          = "grace"           // preStop sleep, SHUTDOWN_DELAY, and a grace period above both and the 10 s drain
	checkImage          = "image"           // image pinned by tag or digest, never latest
	checkNetworkPolicy  = "network-policy"  // only the http, grpc and site ports are reachable
	checkReplicated     = "replicated"      // etcd overlay: odd etcd quorum, replicas on etcd, budgets, spread, safe rollouts
	checkTLS            = "tls"             // TLS files from a Secret volume, HTTPS probes and scrapes; required by the ha overlay
)

var allChecks = []string{
	checkSelector, checkService, checkGoverning, checkProbes, checkResources, checkSecurity,
	checkServiceAccount, checkSecrets, checkStatefulSet, checkGrace, checkImage, checkNetworkPolicy,
	checkReplicated, checkTLS,
}

// shutdownTimeoutSeconds is how long a service drains after SIGTERM (CONTRACT §0).
const shutdownTimeoutSeconds = 10

type finding struct {
	check  string
	object string
	msg    string
}

func (f finding) String() string { return fmt.Sprintf("[%s] %s: %s", f.check, f.object, f.msg) }

type checkOptions struct {
	// requireNetworkPolicies is set for overlays: the base deliberately leaves
	// network policy to them.
	requireNetworkPolicies bool
	// requireTLS: every Gatehouse container serves TLS (the ha overlay).
	requireTLS bool
}

// workload is the part of a StatefulSet, Deployment or DaemonSet the checks need.
type workload struct {
	kind, namespace, name string
	replicas              *int32 // nil when the kind has no replicas
	hasReplicas           bool
	selector              *metav1.LabelSelector
	template              corev1.PodTemplateSpec
	claims                []corev1.PersistentVolumeClaim
	serviceName           string
	strategy              *appsv1.DeploymentStrategy // Deployments only
}

// gatehouse reports whether the workload runs a Gatehouse service (as opposed
// to the etcd cluster of the replicated overlay).
func (w workload) gatehouse() bool {
	return slices.ContainsFunc(w.template.Spec.Containers, isGatehouse)
}

func isGatehouse(c corev1.Container) bool { return strings.Contains(c.Image, "gatehouse/") }

func (w workload) String() string { return w.kind + " " + qualified(w.namespace, w.name) }

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

type inventory struct {
	workloads       []workload
	services        []*corev1.Service
	serviceAccounts []*corev1.ServiceAccount
	secrets         []*corev1.Secret
	netpols         []*networkingv1.NetworkPolicy
	budgets         []*policyv1.PodDisruptionBudget
}

func inventoryOf(objs []runtime.Object) inventory {
	var inv inventory
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.StatefulSet:
			inv.workloads = append(inv.workloads, workload{
				kind: "StatefulSet", namespace: o.Namespace, name: o.Name,
				replicas: o.Spec.Replicas, hasReplicas: true, selector: o.Spec.Selector,
				template: o.Spec.Template, claims: o.Spec.VolumeClaimTemplates, serviceName: o.Spec.ServiceName,
			})
		case *appsv1.Deployment:
			inv.workloads = append(inv.workloads, workload{
				kind: "Deployment", namespace: o.Namespace, name: o.Name,
				replicas: o.Spec.Replicas, hasReplicas: true, selector: o.Spec.Selector, template: o.Spec.Template,
				strategy: &o.Spec.Strategy,
			})
		case *appsv1.DaemonSet:
			inv.workloads = append(inv.workloads, workload{
				kind: "DaemonSet", namespace: o.Namespace, name: o.Name,
				selector: o.Spec.Selector, template: o.Spec.Template,
			})
		case *corev1.Service:
			inv.services = append(inv.services, o)
		case *corev1.ServiceAccount:
			inv.serviceAccounts = append(inv.serviceAccounts, o)
		case *corev1.Secret:
			inv.secrets = append(inv.secrets, o)
		case *networkingv1.NetworkPolicy:
			inv.netpols = append(inv.netpols, o)
		case *policyv1.PodDisruptionBudget:
			inv.budgets = append(inv.budgets, o)
		}
	}
	return inv
}

// checkAll runs every check over one rendered kustomization.
func checkAll(objs []runtime.Object, opts checkOptions) []finding {
	inv := inventoryOf(objs)
	var fs []finding
	add := func(check, object, format string, args ...any) {
		fs = append(fs, finding{check: check, object: object, msg: fmt.Sprintf(format, args...)})
	}
	for _, w := range inv.workloads {
		checkWorkloadSelector(w, add)
		checkGoverningService(w, inv, add)
		checkPod(w, add)
		checkServiceAccountOf(w, inv, add)
		checkStorage(w, add)
		checkReplicas(w, inv, add)
		checkTLSServing(w, opts.requireTLS, add)
		if opts.requireNetworkPolicies {
			checkNetworkPolicies(w, inv, add)
		}
	}
	for _, s := range inv.services {
		checkServiceTargets(s, inv, add)
	}
	for _, s := range inv.secrets {
		if len(s.Data) > 0 || len(s.StringData) > 0 {
			add(checkSecrets, "Secret "+qualified(s.Namespace, s.Name),
				"holds %d literal value(s); secrets are created out of band, never rendered from the repository",
				len(s.Data)+len(s.StringData))
		}
	}
	return fs
}

type addFunc func(check, object, format string, args ...any)

func checkWorkloadSelector(w workload, add addFunc) {
	if w.selector == nil || (len(w.selector.MatchLabels) == 0 && len(w.selector.MatchExpressions) == 0) {
		add(checkSelector, w.String(), "empty selector")
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil {
		add(checkSelector, w.String(), "invalid selector: %v", err)
		return
	}
	if !sel.Matches(labels.Set(w.template.Labels)) {
		add(checkSelector, w.String(), "selector %q does not match pod template labels %v", sel, w.template.Labels)
	}
}

// selects reports whether a Service- or NetworkPolicy-style selector in ns
// picks the pods of w.
func selects(ns string, sel labels.Selector, w workload) bool {
	return ns == w.namespace && sel.Matches(labels.Set(w.template.Labels))
}

func checkServiceTargets(s *corev1.Service, inv inventory, add addFunc) {
	id := "Service " + qualified(s.Namespace, s.Name)
	if len(s.Spec.Selector) == 0 {
		add(checkService, id, "no selector")
		return
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	var picked []workload
	for _, w := range inv.workloads {
		if selects(s.Namespace, sel, w) {
			picked = append(picked, w)
		}
	}
	if len(picked) == 0 {
		add(checkService, id, "selector %v matches no workload", s.Spec.Selector)
	}
	var names []string
	for _, p := range s.Spec.Ports {
		names = append(names, p.Name)
		for _, w := range picked {
			if !podDeclaresPort(w.template.Spec, p.TargetPort, p.Port) {
				add(checkService, id, "port %q targets %s, which %s does not declare", p.Name, p.TargetPort.String(), w)
			}
		}
	}
	want := []string{"http", "grpc"}
	if len(picked) > 0 && !slices.ContainsFunc(picked, workload.gatehouse) {
		want = []string{"client"} // etcd's Services
	}
	for _, want := range want {
		if !slices.Contains(names, want) {
			add(checkService, id, "no port named %q (has %v)", want, names)
		}
	}
}

// podDeclaresPort resolves a Service targetPort (defaulting to port) against
// the containers of a pod.
func podDeclaresPort(spec corev1.PodSpec, target intstr.IntOrString, port int32) bool {
	for _, c := range spec.Containers {
		if _, ok := containerPort(c, target, port); ok {
			return true
		}
	}
	return false
}

// containerPort finds the declared port a probe, Service or NetworkPolicy
// port refers to: by name, or by number; a zero IntOrString means fallback.
func containerPort(c corev1.Container, ref intstr.IntOrString, fallback int32) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		switch {
		case ref.Type == intstr.String && ref.StrVal != "":
			if p.Name == ref.StrVal {
				return p, true
			}
		case ref.Type == intstr.Int && ref.IntVal != 0:
			if p.ContainerPort == ref.IntVal {
				return p, true
			}
		default:
			if p.ContainerPort == fallback {
				return p, true
			}
		}
	}
	return corev1.ContainerPort{}, false
}

func checkGoverningService(w workload, inv inventory, add addFunc) {
	if w.kind != "StatefulSet" {
		return
	}
	if w.serviceName == "" {
		add(checkGoverning, w.String(), "no serviceName")
		return
	}
	for _, s := range inv.services {
		if s.Namespace != w.namespace || s.Name != w.serviceName {
			continue
		}
		if s.Spec.ClusterIP != corev1.ClusterIPNone {
			add(checkGoverning, w.String(), "governing Service %s is not headless (clusterIP: None)", s.Name)
		}
		if len(s.Spec.Selector) == 0 || !selects(s.Namespace, labels.SelectorFromSet(s.Spec.Selector), w) {
			add(checkGoverning, w.String(), "governing Service %s does not select its pods", s.Name)
		}
		return
	}
	add(checkGoverning, w.String(), "governing Service %q is not in the build", w.serviceName)
}

// checkShutdown: a service container sleeps in a preStop hook (the pod
// leaves the Service's endpoints meanwhile), then serves on for
// SHUTDOWN_DELAY with /readyz failing, then drains for up to 10 s; the grace
// period must cover all three, or SIGKILL cuts the drain.
func checkShutdown(w workload, add addFunc) {
	spec := w.template.Spec
	id := w.String()
	g := spec.TerminationGracePeriodSeconds
	if g == nil {
		add(checkGrace, id, "terminationGracePeriodSeconds not set")
		return
	}
	need := int64(shutdownTimeoutSeconds)
	for _, c := range spec.Containers {
		if !isGatehouse(c) {
			continue
		}
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 1 {
			add(checkGrace, id, "container %s has no preStop sleep: SIGTERM would come while the endpoints still send to it", c.Name)
			continue
		}
		delay := time.Duration(0)
		for _, e := range c.Env {
			if e.Name == "SHUTDOWN_DELAY" {
				d, err := time.ParseDuration(e.Value)
				if err != nil {
					add(checkGrace, id, "container %s: SHUTDOWN_DELAY %q is not a duration", c.Name, e.Value)
				}
				delay = d
			}
		}
		if delay <= 0 {
			add(checkGrace, id, "container %s sets no SHUTDOWN_DELAY: it would stop accepting the moment /readyz fails", c.Name)
		}
		need = max(need, c.Lifecycle.PreStop.Sleep.Seconds+int64(delay.Seconds()+0.999)+shutdownTimeoutSeconds)
	}
	if *g <= need {
		add(checkGrace, id, "terminationGracePeriodSeconds %d is not above the %d s of preStop, shutdown delay and drain", *g, need)
	}
}

func checkPod(w workload, add addFunc) {
	spec := w.template.Spec
	id := w.String()

	checkShutdown(w, add)

	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.FSGroup == nil || *psc.FSGroup == 0 {
		add(checkSecurity, id, "no non-zero fsGroup: the volume would not be writable by the non-root user")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		add(checkSecurity, id, "shares a host namespace")
	}

	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		cid := id + " container " + c.Name
		checkContainerSecurity(psc, c, cid, add)
		checkContainerResources(c, cid, add)
		checkContainerSecrets(c, cid, add)
		checkImageRef(c, cid, add)
	}
	for _, c := range spec.Containers {
		checkContainerProbes(c, id+" container "+c.Name, add)
	}
}

func checkContainerSecurity(psc *corev1.PodSecurityContext, c corev1.Container, id string, add addFunc) {
	sc := c.SecurityContext
	if sc == nil {
		add(checkSecurity, id, "no securityContext")
		sc = &corev1.SecurityContext{}
	}
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = psc.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		add(checkSecurity, id, "runAsNonRoot is not true")
	}
	user := sc.RunAsUser
	if user == nil {
		user = psc.RunAsUser
	}
	if user == nil || *user == 0 {
		add(checkSecurity, id, "no numeric non-root runAsUser")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		add(checkSecurity, id, "root filesystem is writable (readOnlyRootFilesystem not true)")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		add(checkSecurity, id, "allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		add(checkSecurity, id, "privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		add(checkSecurity, id, "capabilities do not drop ALL")
	} else if len(sc.Capabilities.Add) > 0 {
		add(checkSecurity, id, "adds capabilities %v", sc.Capabilities.Add)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		add(checkSecurity, id, "seccompProfile is not RuntimeDefault")
	}
}

func checkContainerResources(c corev1.Container, id string, add addFunc) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[name]
		lim, hasLim := c.Resources.Limits[name]
		if !hasReq {
			add(checkResources, id, "no %s request", name)
		}
		if !hasLim {
			add(checkResources, id, "no %s limit", name)
		}
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			add(checkResources, id, "%s request %s above limit %s", name, req.String(), lim.String())
		}
	}
}

// secretish matches environment variable names whose value must never be a literal.
var secretish = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL)`)

func checkContainerSecrets(c corev1.Container, id string, add addFunc) {
	for _, arg := range slices.Concat(c.Command, c.Args) {
		if strings.HasPrefix(arg, "--bootstrap-token") {
			add(checkSecrets, id, "bootstrap token passed as a literal argument")
		}
	}
	for _, e := range c.Env {
		if secretish.MatchString(e.Name) && e.Value != "" {
			add(checkSecrets, id, "env %s holds a literal value", e.Name)
		}
	}
	if len(c.Ports) == 0 || !isGatehouse(c) { // not a Gatehouse server container
		return
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "BOOTSTRAP_TOKEN" })
	switch {
	case i < 0:
		add(checkSecrets, id, "no BOOTSTRAP_TOKEN: the service would log a random admin secret")
	case c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil:
		add(checkSecrets, id, "BOOTSTRAP_TOKEN does not come from a secretKeyRef")
	}
}

func checkImageRef(c corev1.Container, id string, add addFunc) {
	img := c.Image
	if strings.Contains(img, "@sha256:") {
		return
	}
	name := img[strings.LastIndex(img, "/")+1:] // a registry host may carry a :port
	_, tag, hasTag := strings.Cut(name, ":")
	if !hasTag || tag == "" {
		add(checkImage, id, "image %q has no tag or digest", img)
	} else if tag == "latest" {
		add(checkImage, id, "image %q uses the latest tag", img)
	}
}

func checkContainerProbes(c corev1.Container, id string, add addFunc) {
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"readinessProbe", c.ReadinessProbe}, {"livenessProbe", c.LivenessProbe}} {
		switch {
		case p.probe == nil:
			add(checkProbes, id, "no %s", p.name)
		case !isGatehouse(c) || p.probe.GRPC != nil:
			// etcd's probes are its own HTTP endpoints.
		case p.name == "livenessProbe" && servesTLS(c) && p.probe.HTTPGet != nil && p.probe.HTTPGet.Path == "/healthz":
			// The kubelet's gRPC probe speaks no TLS (checkTLS wants HTTPS).
		case p.name == "readinessProbe" && p.probe.HTTPGet != nil && p.probe.HTTPGet.Path == "/readyz":
			// /readyz answers 503 while the store does not (CONTRACT §0).
		default:
			add(checkProbes, id, "%s is not a gRPC probe (or, for readiness, GET /readyz)", p.name)
		}
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"readinessProbe", c.ReadinessProbe}, {"livenessProbe", c.LivenessProbe}, {"startupProbe", c.StartupProbe}} {
		if p.probe == nil {
			continue
		}
		var ref intstr.IntOrString
		switch h := p.probe.ProbeHandler; {
		case h.GRPC != nil:
			ref = intstr.FromInt32(h.GRPC.Port)
		case h.HTTPGet != nil:
			ref = h.HTTPGet.Port
		case h.TCPSocket != nil:
			ref = h.TCPSocket.Port
		default:
			continue // exec probes have no port
		}
		if _, ok := containerPort(c, ref, 0); !ok {
			add(checkProbes, id, "%s port %s is not declared by the container", p.name, ref.String())
		}
	}
}

func checkServiceAccountOf(w workload, inv inventory, add addFunc) {
	spec := w.template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		add(checkServiceAccount, w.String(), "pod automountServiceAccountToken is not false")
	}
	if spec.ServiceAccountName == "" || spec.ServiceAccountName == "default" {
		add(checkServiceAccount, w.String(), "runs as the namespace's default ServiceAccount")
		return
	}
	for _, sa := range inv.serviceAccounts {
		if sa.Namespace == w.namespace && sa.Name == spec.ServiceAccountName {
			if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
				add(checkServiceAccount, "ServiceAccount "+qualified(sa.Namespace, sa.Name), "automountServiceAccountToken is not false")
			}
			return
		}
	}
	add(checkServiceAccount, w.String(), "ServiceAccount %q is not in the build", spec.ServiceAccountName)
}

// checkStorage enforces the bbolt rules: the store is one locked file, so the
// workload is a single-replica StatefulSet whose DB_PATH lives on its claim.
func checkStorage(w workload, add addFunc) {
	if !w.gatehouse() {
		return // the etcd cluster: checkReplicas
	}
	if w.kind != "StatefulSet" && storesInEtcd(w) {
		return // replicas on etcd keep no file: checkReplicas
	}
	if w.kind == "StatefulSet" {
		if w.replicas == nil || *w.replicas != 1 {
			got := "unset"
			if w.replicas != nil {
				got = fmt.Sprint(*w.replicas)
			}
			add(checkStatefulSet, w.String(), "replicas is %s, want exactly 1 (bbolt holds an exclusive lock)", got)
		}
		if len(w.claims) == 0 {
			add(checkStatefulSet, w.String(), "no volumeClaimTemplate")
		}
	}
	for _, c := range w.template.Spec.Containers {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "DB_PATH" })
		if i < 0 {
			if w.kind == "StatefulSet" {
				add(checkStatefulSet, w.String()+" container "+c.Name, "no DB_PATH")
			}
			continue
		}
		id := w.String() + " container " + c.Name
		if w.kind != "StatefulSet" {
			add(checkStatefulSet, id, "a %s with a bbolt store (DB_PATH): use a single-replica StatefulSet", w.kind)
			continue
		}
		dbPath := c.Env[i].Value
		if !path.IsAbs(dbPath) {
			add(checkStatefulSet, id, "DB_PATH %q is not an absolute literal path", dbPath)
			continue
		}
		dir := path.Dir(dbPath)
		mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return path.Clean(m.MountPath) == dir && !m.ReadOnly &&
				slices.ContainsFunc(w.claims, func(pvc corev1.PersistentVolumeClaim) bool { return pvc.Name == m.Name })
		})
		if !mounted {
			add(checkStatefulSet, id, "DB_PATH folder %s is not a writable mount of a volumeClaimTemplate", dir)
		}
	}
}

// envOf returns the literal value of a container's variable name.
func envOf(c corev1.Container, name string) (string, bool) {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return "", false
	}
	return c.Env[i].Value, true
}

// storesInEtcd reports whether every Gatehouse container of w runs --store etcd.
func storesInEtcd(w workload) bool {
	for _, c := range w.template.Spec.Containers {
		if v, _ := envOf(c, "STORE"); isGatehouse(c) && v != "etcd" {
			return false
		}
	}
	return true
}

// checkReplicas covers the replicated overlay (CONTRACT §4): the etcd
// cluster is an odd number of at least 3 members on volumes; a service with
// more than one replica runs on etcd with every member as an endpoint; every
// replicated workload has a PodDisruptionBudget allowing at most one pod
// down, spreads over nodes, and a Deployment rolls out without taking a pod
// down first (maxUnavailable 0).
func checkReplicas(w workload, inv inventory, add addFunc) {
	n := int32(1)
	if w.replicas != nil {
		n = *w.replicas
	}
	id := w.String()
	checkEtcdSecured(w, inv, add)
	if !w.gatehouse() {
		if w.kind != "StatefulSet" {
			add(checkReplicated, id, "etcd members need stable names and volumes: a StatefulSet, not a %s", w.kind)
		}
		if n < 3 || n%2 == 0 {
			add(checkReplicated, id, "%d etcd members: want an odd number of at least 3 (a quorum that survives one loss)", n)
		}
		if len(w.claims) == 0 {
			add(checkReplicated, id, "etcd members without a volumeClaimTemplate lose the data on restart")
		}
	} else if n > 1 || w.kind == "Deployment" {
		if !storesInEtcd(w) {
			add(checkReplicated, id, "%d replicas without STORE=etcd: replicas need the etcd store", n)
		}
		for _, c := range w.template.Spec.Containers {
			if !isGatehouse(c) {
				continue
			}
			eps, _ := envOf(c, "ETCD_ENDPOINTS")
			if members := etcdMembers(inv, w.namespace); len(strings.Split(eps, ",")) < members {
				add(checkReplicated, id+" container "+c.Name, "ETCD_ENDPOINTS %q does not list all %d etcd members", eps, members)
			}
		}
		if s := w.strategy; s != nil && (s.RollingUpdate == nil || s.RollingUpdate.MaxUnavailable == nil ||
			s.RollingUpdate.MaxUnavailable.String() != "0") {
			add(checkReplicated, id, "rolling update does not set maxUnavailable 0 (a rollout would lose capacity first)")
		}
	}
	if n <= 1 {
		return
	}
	if a := w.template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil {
		add(checkReplicated, id, "%d replicas without podAntiAffinity: they may share one node", n)
	}
	budgeted := false
	for _, b := range inv.budgets {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || b.Spec.Selector == nil || !selects(b.Namespace, sel, w) {
			continue
		}
		budgeted = true
		if b.Spec.MaxUnavailable == nil || b.Spec.MaxUnavailable.String() != "1" {
			add(checkReplicated, "PodDisruptionBudget "+qualified(b.Namespace, b.Name), "want maxUnavailable 1 for %s", w)
		}
	}
	if !budgeted {
		add(checkReplicated, id, "%d replicas without a PodDisruptionBudget", n)
	}
}

// etcdMembers is the replica count of the etcd StatefulSet in ns (0 if none).
func etcdMembers(inv inventory, ns string) int {
	for _, w := range inv.workloads {
		if !w.gatehouse() && w.namespace == ns && w.replicas != nil {
			return int(*w.replicas)
		}
	}
	return 0
}

// checkNetworkPolicies requires that some policy isolates the workload's pods
// for ingress and that every policy selecting them opens only the container's
// "http" and "grpc" ports (and the portal's public "site").
func checkNetworkPolicies(w workload, inv inventory, add addFunc) {
	isolated := false
	for _, np := range inv.netpols {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !selects(np.Namespace, sel, w) {
			continue
		}
		if !policyHasIngress(np) {
			continue
		}
		isolated = true
		id := "NetworkPolicy " + qualified(np.Namespace, np.Name)
		for _, rule := range np.Spec.Ingress {
			if len(rule.Ports) == 0 {
				add(checkNetworkPolicy, id, "an ingress rule opens every port of %s", w)
			}
			for _, p := range rule.Ports {
				if p.Port == nil || p.EndPort != nil {
					add(checkNetworkPolicy, id, "an ingress rule opens a port range of %s", w)
					continue
				}
				ok := slices.ContainsFunc(w.template.Spec.Containers, func(c corev1.Container) bool {
					cp, found := containerPort(c, *p.Port, 0)
					if !isGatehouse(c) {
						return found && (cp.Name == "client" || cp.Name == "peer") // etcd
					}
					return found && (cp.Name == "http" || cp.Name == "grpc" || cp.Name == "site")
				})
				if !ok {
					add(checkNetworkPolicy, id, "opens port %s, which is not the http, grpc or site port of %s", p.Port.String(), w)
				}
			}
		}
	}
	if !isolated {
		add(checkNetworkPolicy, w.String(), "no NetworkPolicy restricts ingress to its pods")
	}
}

func policyHasIngress(np *networkingv1.NetworkPolicy) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return true // the API server defaults to Ingress
	}
	return slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

// servesTLS reports whether a container is given a TLS certificate.
func servesTLS(c corev1.Container) bool {
	_, ok := envOf(c, "TLS_CERT_FILE")
	return ok
}

// checkTLSServing: a Gatehouse container given a certificate has its key
// too, both from a mounted volume (a Secret, never the image); its probes
// ask over HTTPS and none is a gRPC probe (the kubelet's speaks no TLS);
// scraped pods say prometheus.io/scheme https. With required, every
// Gatehouse container serves TLS.
func checkTLSServing(w workload, required bool, add addFunc) {
	for _, c := range w.template.Spec.Containers {
		if !isGatehouse(c) {
			continue
		}
		id := w.String() + " container " + c.Name
		if !servesTLS(c) {
			if required {
				add(checkTLS, id, "serves plain text: no TLS_CERT_FILE")
			}
			continue
		}
		for _, env := range []string{"TLS_CERT_FILE", "TLS_KEY_FILE"} {
			v, _ := envOf(c, env)
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
				return v != "" && strings.HasPrefix(v, strings.TrimSuffix(m.MountPath, "/")+"/")
			}) {
				add(checkTLS, id, "%s %q is not on a mounted volume", env, v)
			}
		}
		for name, p := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe, "startupProbe": c.StartupProbe} {
			switch {
			case p == nil:
			case p.GRPC != nil:
				add(checkTLS, id, "%s is a gRPC probe, which speaks no TLS: probe GET /healthz over HTTPS", name)
			case p.HTTPGet != nil && p.HTTPGet.Scheme != corev1.URISchemeHTTPS:
				add(checkTLS, id, "%s asks over HTTP, want scheme HTTPS", name)
			}
		}
		if a := w.template.Annotations; a["prometheus.io/scrape"] == "true" && a["prometheus.io/scheme"] != "https" {
			add(checkTLS, id, "scraped without prometheus.io/scheme: https")
		}
	}
}

#!/usr/bin/env bash
# Sets up a local kind cluster on which Starforge runs real RayJobs through the real KubeRay
# operator, and a Starforge profile for it. Idempotent: run it again to repair or update.
#
#   bash scripts/e2e/setup-kind.sh            create or update everything
#   bash scripts/e2e/setup-kind.sh --delete   tear it all down
#
# What it does (docs/e2e.md has the why):
#   1. kind cluster $KIND_CLUSTER_NAME (one control-plane node + $KIND_WORKERS workers), reused
#      when it exists; its kubeconfig goes to the state folder, not to ~/.kube/config;
#   2. the KubeRay operator $KUBERAY_VERSION with helm (chart kuberay/kuberay-operator), its CRDs
#      applied server-side first so that switching versions replaces them too;
#   3. namespace starforge, ServiceAccount starforge-e2e with the Role and ClusterRole of
#      docs/kubernetes.md, and a token for it;
#   4. PVC starforge-storage (kind's default local-path class, ReadWriteOnce);
#   5. the worker nodes labelled starforge/gpu-series=kind with $FAKE_GPUS_PER_NODE fake
#      nvidia.com/gpu in their status (kind has no GPUs; FORGE_K8S_GPU_PASSTHROUGH=0);
#   6. MinIO over plain HTTP on a NodePort of a node's IP, one URL for the host and the pods,
#      and the bucket, created from inside the cluster through that URL;
#   7. the job image: $RAY_IMAGE with the sandbox's NeMo-RL stand-in in /opt/nemo-rl, built and
#      loaded into the kind nodes;
#   8. the Starforge profile $STARFORGE_E2E_PROFILE, secrets into the keychain through --stdin.
#
# Knobs (environment): KIND_CLUSTER_NAME (starforge-e2e), KUBERAY_VERSION (1.7.0),
# KIND_WORKERS (1; 0 = a single untainted node), KIND_NODE_IMAGE (kind's default),
# FAKE_GPUS_PER_NODE (8), RAY_VERSION (2.55.1), RAY_IMAGE (rayproject/ray:$RAY_VERSION),
# STARFORGE_E2E_IMAGE (use this job image instead of building one), NEMO_RL_STANDIN_DIR
# (src/sandbox/tools/nemo-rl), MINIO_IMAGE, MC_IMAGE, MINIO_NODE_PORT (30900),
# STARFORGE_E2E_S3_HOST (the host part of the S3 URL; default the kind node's IP),
# STARFORGE_E2E_PUBLISH_S3 (1: publish the NodePort on the host when creating the cluster, for
# Docker Desktop) and STARFORGE_E2E_PUBLISH_ADDRESS (0.0.0.0), STARFORGE_E2E_PROFILE (kind-e2e),
# STARFORGE_E2E_STATE_DIR,
# STARFORGE_CLI (build/bin/starforge-cli), CONTAINER_ENGINE (docker or podman; detected).
set -euo pipefail

origin=$PWD
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

CLUSTER=${KIND_CLUSTER_NAME:-starforge-e2e}
KUBERAY_VERSION=${KUBERAY_VERSION:-1.7.0}
KUBERAY_VERSION=${KUBERAY_VERSION#v}   # the chart's versions have no "v"
KIND_WORKERS=${KIND_WORKERS:-1}
FAKE_GPUS=${FAKE_GPUS_PER_NODE:-8}
RAY_VERSION=${RAY_VERSION:-2.55.1}
RAY_IMAGE=${RAY_IMAGE:-rayproject/ray:$RAY_VERSION}
STANDIN_DIR=${NEMO_RL_STANDIN_DIR:-src/sandbox/tools/nemo-rl}
# Pinned MinIO releases (quay.io tags); any recent release works.
MINIO_IMAGE=${MINIO_IMAGE:-quay.io/minio/minio:RELEASE.2024-07-26T20-48-21Z}
MC_IMAGE=${MC_IMAGE:-quay.io/minio/mc:RELEASE.2024-07-08T20-59-24Z}
MINIO_NODE_PORT=${MINIO_NODE_PORT:-30900}
PROFILE=${STARFORGE_E2E_PROFILE:-kind-e2e}
STATE_DIR=${STARFORGE_E2E_STATE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/starforge-e2e/$CLUSTER}

NAMESPACE=starforge
S3_NAMESPACE=starforge-s3
BUCKET=starforge
SERIES=kind
GPU_LABEL=starforge/gpu-series
SERVICE_ACCOUNT=starforge-e2e
STORAGE_PVC=starforge-storage
OPERATOR_NAMESPACE=kuberay-system
STANDIN_REPOSITORY=localhost/starforge/nemo-rl-standin   # "localhost/" so docker and podman name it alike

if [ -n "${STARFORGE_CLI:-}" ]; then
    case $STARFORGE_CLI in
        /*) cli=$STARFORGE_CLI ;;
        *) cli=$origin/$STARFORGE_CLI ;;
    esac
else
    cli=$repo/build/bin/starforge-cli
fi

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() {
    printf 'setup-kind: error: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 is not installed; $2"
}

# The container engine kind runs on: docker, or podman through kind's podman provider.
detect_engine() {
    engine=${CONTAINER_ENGINE:-}
    if [ -z "$engine" ]; then
        if [ "${KIND_EXPERIMENTAL_PROVIDER:-}" = podman ]; then
            engine=podman
        elif command -v docker >/dev/null 2>&1; then
            engine=docker
        elif command -v podman >/dev/null 2>&1; then
            engine=podman
        else
            die "neither docker nor podman is installed; kind needs one of them"
        fi
    fi
    case $engine in
        docker) ;;
        podman) export KIND_EXPERIMENTAL_PROVIDER=podman ;;
        *) die "CONTAINER_ENGINE must be docker or podman, not '$engine'" ;;
    esac
    need "$engine" "install it or set CONTAINER_ENGINE"
}

cluster_exists() {
    kind get clusters 2>/dev/null | grep -qx -- "$CLUSTER"
}

kc() {
    kubectl --kubeconfig "$KUBECONFIG_FILE" "$@"
}

# ---- --delete ---------------------------------------------------------------------------------

teardown() {
    need kind "see docs/e2e.md, Prerequisites"
    detect_engine
    if cluster_exists; then
        say "deleting kind cluster $CLUSTER (the operator, MinIO, the bucket and every job go with it)"
        local args=(delete cluster --name "$CLUSTER")
        if [ -f "$STATE_DIR/kubeconfig" ]; then
            args+=(--kubeconfig "$STATE_DIR/kubeconfig")
        fi
        kind "${args[@]}"
    else
        say "kind cluster $CLUSTER does not exist"
    fi
    if [ -x "$cli" ]; then
        if "$cli" profile show "$PROFILE" >/dev/null 2>&1; then
            say "deleting Starforge profile $PROFILE and its keychain entries"
            "$cli" profile delete "$PROFILE" ||
                note "could not delete it (keychain unreachable?): run '$cli profile delete $PROFILE --force'"
        fi
    else
        note "$cli not found: if a profile $PROFILE exists, delete it with 'starforge-cli profile delete $PROFILE'"
    fi
    local images
    images=$("$engine" images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null | grep -E "^$STANDIN_REPOSITORY:" || true)
    if [ -n "$images" ]; then
        say "removing the local stand-in image(s)"
        # shellcheck disable=SC2086 # one image reference per word
        "$engine" rmi $images >/dev/null || note "could not remove: $images"
    fi
    if [ -d "$STATE_DIR" ]; then
        say "removing $STATE_DIR"
        rm -rf "$STATE_DIR"
    fi
    say "done"
}

# ---- 1. the cluster --------------------------------------------------------------------------

create_cluster() {
    mkdir -p "$STATE_DIR"
    chmod 700 "$STATE_DIR"
    KUBECONFIG_FILE=$STATE_DIR/kubeconfig
    if cluster_exists; then
        say "reusing kind cluster $CLUSTER"
    else
        say "creating kind cluster $CLUSTER (1 control-plane, $KIND_WORKERS worker(s))"
        local config=$STATE_DIR/kind-config.yaml
        {
            echo "kind: Cluster"
            echo "apiVersion: kind.x-k8s.io/v1alpha4"
            echo "nodes:"
            echo "- role: control-plane"
            if [ "${STARFORGE_E2E_PUBLISH_S3:-0}" = 1 ]; then
                # Docker Desktop: container IPs are not reachable from the host, so MinIO's NodePort
                # is published on the host as well (docs/e2e.md, "Docker Desktop and macOS").
                echo "  extraPortMappings:"
                echo "  - {containerPort: $MINIO_NODE_PORT, hostPort: $MINIO_NODE_PORT, listenAddress: \"${STARFORGE_E2E_PUBLISH_ADDRESS:-0.0.0.0}\", protocol: TCP}"
            fi
            local i
            for ((i = 0; i < KIND_WORKERS; i++)); do
                echo "- role: worker"
            done
        } >"$config"
        local args=(create cluster --name "$CLUSTER" --config "$config" --kubeconfig "$KUBECONFIG_FILE" --wait 180s)
        if [ -n "${KIND_NODE_IMAGE:-}" ]; then
            args+=(--image "$KIND_NODE_IMAGE")
        fi
        kind "${args[@]}"
    fi
    # Always fresh: the API server's port changes when the node containers restart.
    kind get kubeconfig --name "$CLUSTER" >"$KUBECONFIG_FILE.tmp"
    mv "$KUBECONFIG_FILE.tmp" "$KUBECONFIG_FILE"
    chmod 600 "$KUBECONFIG_FILE"
    kc wait --for=condition=Ready nodes --all --timeout=180s >/dev/null
    API_SERVER=$(kc config view --raw -o jsonpath='{.clusters[0].cluster.server}')
    CA_DATA=$(kc config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
    if [ -z "$API_SERVER" ] || [ -z "$CA_DATA" ]; then
        die "the kubeconfig of $CLUSTER has no server or CA data"
    fi
    note "API server $API_SERVER; kubeconfig $KUBECONFIG_FILE"
}

# ---- 2. the KubeRay operator -----------------------------------------------------------------

install_operator() {
    say "installing the KubeRay operator $KUBERAY_VERSION (helm chart kuberay/kuberay-operator)"
    helm repo add kuberay https://ray-project.github.io/kuberay-helm/ --force-update >/dev/null
    helm repo update kuberay >/dev/null
    # Helm installs a chart's CRDs only once and never upgrades them, so a version switch would
    # keep the old schema (and the app reads what the operator can do from it). Server-side:
    # the RayCluster CRD is too large for client-side apply's annotation.
    helm show crds kuberay/kuberay-operator --version "$KUBERAY_VERSION" |
        kc apply --server-side --force-conflicts -f - >/dev/null
    helm upgrade --install kuberay-operator kuberay/kuberay-operator \
        --kubeconfig "$KUBECONFIG_FILE" --version "$KUBERAY_VERSION" \
        --namespace "$OPERATOR_NAMESPACE" --create-namespace --skip-crds --wait --timeout 5m >/dev/null
    kc -n "$OPERATOR_NAMESPACE" rollout status deployment/kuberay-operator --timeout=300s >/dev/null
    note "operator image: $(kc -n "$OPERATOR_NAMESPACE" get deployment kuberay-operator \
        -o jsonpath='{.spec.template.spec.containers[0].image}')"
}

# ---- 3. namespace, ServiceAccount, RBAC, token ------------------------------------------------

apply_rbac() {
    say "namespace $NAMESPACE, ServiceAccount $SERVICE_ACCOUNT with the app's Role and ClusterRole"
    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $NAMESPACE}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: $SERVICE_ACCOUNT, namespace: $NAMESPACE}
---
# docs/kubernetes.md, "Permissions", with full CRUD where the app may grow into it.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: starforge, namespace: $NAMESPACE}
rules:
- {apiGroups: ["ray.io"], resources: ["rayjobs", "rayclusters"], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]}
- {apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "create", "delete"]}
- {apiGroups: [""], resources: ["pods/log"], verbs: ["get"]}
- {apiGroups: [""], resources: ["pods/proxy"], verbs: ["get", "create"]}
- {apiGroups: [""], resources: ["events"], verbs: ["get", "list", "watch"]}
- {apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["get", "list", "watch"]}
- {apiGroups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: starforge-e2e, namespace: $NAMESPACE}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: starforge}
subjects:
- {kind: ServiceAccount, name: $SERVICE_ACCOUNT, namespace: $NAMESPACE}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: starforge-e2e-capacity}
rules:
- {apiGroups: [""], resources: ["nodes", "pods"], verbs: ["list", "watch"]}
# Every authenticated user has these through system:basic-user; said here so the grant is whole.
- {apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], verbs: ["create"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: starforge-e2e-capacity}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: starforge-e2e-capacity}
subjects:
- {kind: ServiceAccount, name: $SERVICE_ACCOUNT, namespace: $NAMESPACE}
---
# A long-lived token (the cluster is a throw-away one): it stays valid across setup runs and
# goes with the cluster.
apiVersion: v1
kind: Secret
metadata:
  name: $SERVICE_ACCOUNT-token
  namespace: $NAMESPACE
  annotations: {kubernetes.io/service-account.name: $SERVICE_ACCOUNT}
type: kubernetes.io/service-account-token
EOF
    TOKEN=
    local _
    for _ in $(seq 1 60); do
        TOKEN=$(kc -n "$NAMESPACE" get secret "$SERVICE_ACCOUNT-token" \
            -o go-template='{{if .data.token}}{{.data.token | base64decode}}{{end}}' 2>/dev/null || true)
        [ -n "$TOKEN" ] && break
        sleep 1
    done
    [ -n "$TOKEN" ] || die "the token controller did not fill secret $NAMESPACE/$SERVICE_ACCOUNT-token in 60 s"

    # A kubeconfig with the app's identity, to check the grant now and for debugging later.
    SA_KUBECONFIG=$STATE_DIR/starforge-e2e.kubeconfig
    (
        umask 077
        cat >"$SA_KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $CLUSTER
  cluster: {server: "$API_SERVER", certificate-authority-data: "$CA_DATA"}
users:
- name: $SERVICE_ACCOUNT
  user: {token: "$TOKEN"}
contexts:
- name: $SERVICE_ACCOUNT
  context: {cluster: $CLUSTER, user: $SERVICE_ACCOUNT, namespace: $NAMESPACE}
current-context: $SERVICE_ACCOUNT
EOF
    )
    local check
    for check in "create rayjobs.ray.io -n $NAMESPACE" "delete rayjobs.ray.io -n $NAMESPACE" \
        "watch rayclusters.ray.io -n $NAMESPACE" "get pods --subresource=log -n $NAMESPACE" \
        "create pods --subresource=proxy -n $NAMESPACE" "watch events -n $NAMESPACE" \
        "list jobs.batch -n $NAMESPACE" "watch nodes" "list pods --all-namespaces"; do
        # shellcheck disable=SC2086 # the check is a list of words
        kubectl --kubeconfig "$SA_KUBECONFIG" auth can-i $check >/dev/null ||
            die "the ServiceAccount may not: $check (kubectl --kubeconfig $SA_KUBECONFIG auth can-i $check)"
    done
    note "token checked: the ServiceAccount may do what the app needs (kubeconfig $SA_KUBECONFIG)"
}

# ---- 4. storage ------------------------------------------------------------------------------

apply_storage() {
    say "PVC $STORAGE_PVC (default storage class, ReadWriteOnce; bound when the first job's pod starts)"
    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $STORAGE_PVC, namespace: $NAMESPACE}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
EOF
}

# ---- 5. GPU nodes ------------------------------------------------------------------------------

fake_gpus() {
    local nodes
    nodes=$(kc get nodes -l '!node-role.kubernetes.io/control-plane' -o jsonpath='{.items[*].metadata.name}')
    if [ -z "$nodes" ]; then
        # A single-node kind cluster: its node is untainted and runs everything.
        nodes=$(kc get nodes -o jsonpath='{.items[*].metadata.name}')
    fi
    GPU_NODES=$nodes
    say "labelling GPU node(s) $GPU_LABEL=$SERIES with $FAKE_GPUS fake nvidia.com/gpu each"
    local node
    for node in $nodes; do
        kc label node "$node" "$GPU_LABEL=$SERIES" --overwrite >/dev/null
        # An extended resource in the node's status (the documented way to advertise one); the
        # kubelet copies capacity into allocatable and keeps it until it re-registers the node.
        kc patch node "$node" --subresource=status --type=json -p "[
            {\"op\": \"add\", \"path\": \"/status/capacity/nvidia.com~1gpu\", \"value\": \"$FAKE_GPUS\"},
            {\"op\": \"add\", \"path\": \"/status/allocatable/nvidia.com~1gpu\", \"value\": \"$FAKE_GPUS\"}]" >/dev/null
    done
    local _ shown ok=0
    for _ in $(seq 1 30); do
        shown=$(kc get nodes -l "$GPU_LABEL=$SERIES" -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{" "}{end}')
        if [ "$(echo "$shown" | tr -s ' ' '\n' | grep -cx "$FAKE_GPUS")" -eq "$(echo "$nodes" | wc -w)" ]; then
            ok=1
            break
        fi
        sleep 1
    done
    [ "$ok" = 1 ] || note "warning: not every GPU node shows $FAKE_GPUS allocatable nvidia.com/gpu yet (the kubelet copies capacity on its next status update)"
    kc get nodes -o custom-columns='NODE:.metadata.name,SERIES:.metadata.labels.starforge/gpu-series,GPUS:.status.allocatable.nvidia\.com/gpu' |
        sed 's/^/    /'
}

# ---- 6. MinIO ------------------------------------------------------------------------------------

deploy_minio() {
    say "MinIO ($MINIO_IMAGE) in namespace $S3_NAMESPACE, NodePort $MINIO_NODE_PORT"
    kc create namespace "$S3_NAMESPACE" --dry-run=client -o yaml | kc apply -f - >/dev/null
    if ! kc -n "$S3_NAMESPACE" get secret minio-credentials >/dev/null 2>&1; then
        local dir
        dir=$(mktemp -d)
        (
            umask 077
            python3 -c 'import secrets; print(secrets.token_hex(10), end="")' >"$dir/accessKey"
            python3 -c 'import secrets; print(secrets.token_hex(20), end="")' >"$dir/secretKey"
        )
        kc -n "$S3_NAMESPACE" create secret generic minio-credentials \
            --from-file=accessKey="$dir/accessKey" --from-file=secretKey="$dir/secretKey" >/dev/null
        rm -rf "$dir"
        note "new credentials in secret $S3_NAMESPACE/minio-credentials"
    fi
    S3_ACCESS_KEY=$(kc -n "$S3_NAMESPACE" get secret minio-credentials -o go-template='{{.data.accessKey | base64decode}}')
    S3_SECRET_KEY=$(kc -n "$S3_NAMESPACE" get secret minio-credentials -o go-template='{{.data.secretKey | base64decode}}')

    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: minio-data, namespace: $S3_NAMESPACE}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: minio, namespace: $S3_NAMESPACE}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: minio}}
  template:
    metadata: {labels: {app: minio}}
    spec:
      containers:
      - name: minio
        image: $MINIO_IMAGE
        args: ["server", "/data", "--console-address", ":9001"]
        env:
        - {name: MINIO_ROOT_USER, valueFrom: {secretKeyRef: {name: minio-credentials, key: accessKey}}}
        - {name: MINIO_ROOT_PASSWORD, valueFrom: {secretKeyRef: {name: minio-credentials, key: secretKey}}}
        ports:
        - {name: s3, containerPort: 9000}
        - {name: console, containerPort: 9001}
        readinessProbe:
          httpGet: {path: /minio/health/ready, port: 9000}
          periodSeconds: 3
        volumeMounts:
        - {name: data, mountPath: /data}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: minio-data}
---
apiVersion: v1
kind: Service
metadata: {name: minio, namespace: $S3_NAMESPACE}
spec:
  type: NodePort
  selector: {app: minio}
  ports:
  - {name: s3, port: 9000, targetPort: 9000, nodePort: $MINIO_NODE_PORT}
EOF
    kc -n "$S3_NAMESPACE" rollout status deployment/minio --timeout=300s >/dev/null

    # One URL for the app on the host and for the init containers in the pods: the presigned
    # GET is signed for its host, so both must use the same one.
    local host=${STARFORGE_E2E_S3_HOST:-}
    if [ -z "$host" ]; then
        local first=${GPU_NODES%% *}
        host=$(kc get node "$first" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
    fi
    case $host in
        *:*) S3_ENDPOINT="http://[$host]:$MINIO_NODE_PORT" ;;   # an IPv6 node address
        *) S3_ENDPOINT="http://$host:$MINIO_NODE_PORT" ;;
    esac
    note "S3 endpoint $S3_ENDPOINT"

    # From the host.
    local _ ok=0
    for _ in $(seq 1 20); do
        if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=3)' \
            "$S3_ENDPOINT/minio/health/live" 2>/dev/null; then
            ok=1
            break
        fi
        sleep 1
    done
    [ "$ok" = 1 ] || die "MinIO is not reachable from this host at $S3_ENDPOINT. On Docker Desktop (macOS, Windows)
    and rootless podman the kind nodes' IPs are not routable from the host: recreate the cluster with
    STARFORGE_E2E_PUBLISH_S3=1 STARFORGE_E2E_S3_HOST=host.docker.internal (docs/e2e.md, 'Docker Desktop and macOS')"

    # From a pod, through the same URL, and the bucket with it.
    say "creating bucket $BUCKET from inside the cluster through $S3_ENDPOINT"
    local hostport=${S3_ENDPOINT#http://}
    kc -n "$S3_NAMESPACE" delete job create-bucket --ignore-not-found >/dev/null
    kc apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: create-bucket, namespace: $S3_NAMESPACE}
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: mc
        image: $MC_IMAGE
        command: ["mc"]
        args: ["mb", "--ignore-existing", "e2e/$BUCKET"]
        env:
        - {name: ACCESS_KEY, valueFrom: {secretKeyRef: {name: minio-credentials, key: accessKey}}}
        - {name: SECRET_KEY, valueFrom: {secretKeyRef: {name: minio-credentials, key: secretKey}}}
        - {name: MC_HOST_e2e, value: "http://\$(ACCESS_KEY):\$(SECRET_KEY)@$hostport"}
EOF
    if ! kc -n "$S3_NAMESPACE" wait --for=condition=complete job/create-bucket --timeout=300s >/dev/null; then
        kc -n "$S3_NAMESPACE" logs job/create-bucket --tail=20 >&2 || true
        die "could not create the bucket from a pod through $S3_ENDPOINT (logs above); pods must reach that URL"
    fi
    note "$(kc -n "$S3_NAMESPACE" logs job/create-bucket --tail=1 2>/dev/null || true)"
}

# ---- 7. the job image ----------------------------------------------------------------------------

build_image() {
    if [ -n "${STARFORGE_E2E_IMAGE:-}" ]; then
        JOB_IMAGE=$STARFORGE_E2E_IMAGE
        say "job image $JOB_IMAGE (given; not built)"
        "$engine" image inspect "$JOB_IMAGE" >/dev/null 2>&1 || "$engine" pull "$JOB_IMAGE"
    else
        [ -f "$STANDIN_DIR/examples/run_grpo.py" ] ||
            die "the NeMo-RL stand-in $STANDIN_DIR/examples/run_grpo.py is missing: update the checkout, or set NEMO_RL_STANDIN_DIR to a folder with examples/run_grpo.py"
        local context
        context=$(mktemp -d)
        cp -R "$STANDIN_DIR" "$context/nemo-rl"
        find "$context/nemo-rl" -name __pycache__ -prune -exec rm -rf {} +
        cat >"$context/Dockerfile" <<'EOF'
# Ray as the RayJob's rayVersion expects, with a NeMo-RL stand-in where FORGE_NEMO_RL_DIR says.
ARG RAY_IMAGE
FROM ${RAY_IMAGE}
COPY nemo-rl/ /opt/nemo-rl/
EOF
        # The tag is the content's hash: a changed stand-in gets a new tag, so no node keeps
        # running an old image under the same name.
        local tag
        tag=$(python3 - "$context" "$RAY_IMAGE" <<'EOF'
import hashlib, os, sys
root, base = sys.argv[1], sys.argv[2]
digest = hashlib.sha256(base.encode() + b"\0")
for dirpath, dirnames, filenames in os.walk(root):
    dirnames.sort()
    for name in sorted(filenames):
        path = os.path.join(dirpath, name)
        digest.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
print(digest.hexdigest()[:12])
EOF
        )
        JOB_IMAGE=$STANDIN_REPOSITORY:e2e-$tag
        if "$engine" image inspect "$JOB_IMAGE" >/dev/null 2>&1; then
            say "job image $JOB_IMAGE (built before)"
        else
            say "building job image $JOB_IMAGE from $RAY_IMAGE + $STANDIN_DIR (the first pull of Ray takes a while)"
            "$engine" build --build-arg "RAY_IMAGE=$RAY_IMAGE" -t "$JOB_IMAGE" "$context"
        fi
        rm -rf "$context"
    fi
    say "loading $JOB_IMAGE into the kind nodes"
    if [ "$engine" = podman ]; then
        # kind's "load docker-image" asks docker; with podman the image goes through an archive.
        local archive
        archive=$(mktemp "${TMPDIR:-/tmp}/starforge-e2e-image.XXXXXX")
        podman save --format docker-archive -o "$archive" "$JOB_IMAGE"
        kind load image-archive "$archive" --name "$CLUSTER"
        rm -f "$archive"
    else
        kind load docker-image "$JOB_IMAGE" --name "$CLUSTER"
    fi
}

# ---- 8. the Starforge profile ----------------------------------------------------------------------

write_profile() {
    say "writing Starforge profile $PROFILE"
    [ -x "$cli" ] || die "$cli is not built: cmake --preset dev && cmake --build build (or set STARFORGE_CLI)"
    # Every setting the loop depends on is set explicitly (KEY= resets one to its default), so a
    # profile edited by hand earlier cannot change the outcome.
    "$cli" profile set "$PROFILE" \
        FORGE_DEFAULT_FLEET_KIND=kuberay \
        FORGE_K8S_API_SERVER="$API_SERVER" \
        FORGE_K8S_CA_DATA="$CA_DATA" \
        FORGE_K8S_CA_FILE= \
        FORGE_K8S_TOKEN_FILE= \
        FORGE_K8S_INSECURE_SKIP_TLS_VERIFY=false \
        FORGE_K8S_NAMESPACE="$NAMESPACE" \
        FORGE_K8S_GPU_NODE_LABEL="$GPU_LABEL" \
        FORGE_K8S_GPU_PASSTHROUGH=0 \
        FORGE_K8S_SHM_SIZE=1Gi \
        FORGE_IMAGE_NEMO_RL="$JOB_IMAGE" \
        FORGE_NEMO_RL_DIR=/opt/nemo-rl \
        FORGE_STORAGE_ROOT=/starforge \
        FORGE_K8S_STORAGE_PVC="$STORAGE_PVC" \
        FORGE_K8S_STORAGE_SHARED=false \
        FORGE_K8S_STORAGE_MOUNT= \
        FORGE_K8S_CORPUS_PVC= \
        FORGE_KUBERAY_RAY_VERSION="$RAY_VERSION" \
        FORGE_KUBERAY_TTL_SECONDS=600 \
        FORGE_KUBERAY_PRERUNNING_DEADLINE_S=600 \
        FORGE_S3_ENDPOINT="$S3_ENDPOINT" \
        FORGE_S3_BUCKET="$BUCKET" \
        FORGE_S3_REGION=us-east-1 \
        FORGE_S3_PATH_STYLE=true \
        FORGE_S3_CA_FILE= >/dev/null
    local key value
    for key in FORGE_K8S_TOKEN FORGE_S3_ACCESS_KEY FORGE_S3_SECRET_KEY; do
        case $key in
            FORGE_K8S_TOKEN) value=$TOKEN ;;
            FORGE_S3_ACCESS_KEY) value=$S3_ACCESS_KEY ;;
            FORGE_S3_SECRET_KEY) value=$S3_SECRET_KEY ;;
        esac
        printf '%s' "$value" | "$cli" profile set "$PROFILE" "$key" --stdin >/dev/null ||
            die "could not store $key in the keychain. Starforge keeps secrets only there: start a Secret
    Service (gnome-keyring, KeePassXC), or on a headless machine run setup and loop inside
    'sh scripts/lib/with-secret-service.sh' (docs/e2e.md, 'Headless machines and CI')"
    done
    note "secrets FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY are in the keychain"
}

# ---- main ----------------------------------------------------------------------------------------

case ${1:-} in
    -h | --help)
        usage
        exit 0
        ;;
    --delete)
        teardown
        exit 0
        ;;
    "") ;;
    *) die "unknown argument '$1'; use --delete or --help" ;;
esac

need kind "install kind >= 0.23 (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)"
need kubectl "install kubectl (https://kubernetes.io/docs/tasks/tools/)"
need helm "install helm 3 (https://helm.sh/docs/intro/install/)"
need python3 "install python3"
detect_engine
case $KIND_WORKERS in
    '' | *[!0-9]*) die "KIND_WORKERS must be a whole number" ;;
esac
case $FAKE_GPUS in
    '' | *[!0-9]* | 0) die "FAKE_GPUS_PER_NODE must be a whole number above 0" ;;
esac
[ -x "$cli" ] || die "$cli is not built: cmake --preset dev && cmake --build build (or set STARFORGE_CLI)"

create_cluster
install_operator
apply_rbac
apply_storage
fake_gpus
deploy_minio
build_image
write_profile

cat <<EOF

Ready.
  cluster       $CLUSTER ($API_SERVER), KubeRay operator $KUBERAY_VERSION
  GPU nodes     $GPU_NODES: $GPU_LABEL=$SERIES, $FAKE_GPUS fake nvidia.com/gpu each
  storage       PVC $NAMESPACE/$STORAGE_PVC (ReadWriteOnce), S3 $S3_ENDPOINT bucket $BUCKET (plain HTTP)
  job image     $JOB_IMAGE
  profile       $PROFILE (secrets in the keychain)
  kubectl       export KUBECONFIG=$KUBECONFIG_FILE
Next:
  bash scripts/e2e/kuberay-loop.sh
  $cli --profile $PROFILE capacity
  bash scripts/e2e/setup-kind.sh --delete     # tear it all down
EOF

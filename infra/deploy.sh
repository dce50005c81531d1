#!/usr/bin/env bash
# Deploys the platform to one Google Cloud project: APIs, service accounts and their roles,
# Firestore (database, rules, indexes), buckets, Pub/Sub topics and push subscriptions, one Cloud
# Function (gen2) per HTTP service of functions/services.ts, the orchestrator functions of
# orchestrator/functions.ts, the reconciler's Cloud Scheduler job, the variant ingestion's Cloud
# Workflows workflow (infra/workflows/ingestion.yaml) and, with BROWSER_DOMAIN, the load balancer
# of the one browser host (docs/deploying.md). Safe to run again: what exists is updated or left alone.
#
#   PROJECT_ID=my-lab-prod bash infra/deploy.sh [--config infra/deploy.env] [--dry-run]
#
# Every setting is a variable (environment or --config file); see infra/README.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY_RUN=false

usage() {
  sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  echo
  echo "Options:"
  echo "  --dry-run        print every command instead of running it (nothing is created or changed)"
  echo "  --config FILE    read the variables from FILE (bash KEY=VALUE lines) before the environment's defaults apply"
  echo "  -h, --help       this text"
}

SCRIPT=deploy
# shellcheck source=infra/lib.sh
. "$REPO/infra/lib.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=true ;;
    --config)
      [ $# -ge 2 ] || die "--config needs a file"
      [ -r "$2" ] || die "cannot read the config file $2"
      # shellcheck disable=SC1090
      set -a && . "$2" && set +a
      shift
      ;;
    --config=*)
      f=${1#--config=}
      [ -r "$f" ] || die "cannot read the config file $f"
      # shellcheck disable=SC1090
      set -a && . "$f" && set +a
      ;;
    -h | --help) usage && exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------
[ -n "${PROJECT_ID:-}" ] || die "PROJECT_ID is required: the Google Cloud project to deploy to"
[[ "$PROJECT_ID" =~ ^[a-z][a-z0-9-]{4,28}[a-z0-9]$ ]] || die "PROJECT_ID '$PROJECT_ID' is not a Google Cloud project id"
REGION=${REGION:-europe-west4}
FIRESTORE_LOCATION=${FIRESTORE_LOCATION:-$REGION}
BATCH_REGION=${BATCH_REGION:-$REGION}
SCHEDULER_REGION=${SCHEDULER_REGION:-$REGION}
BUCKET_LOCATION=${BUCKET_LOCATION:-$REGION}
BUCKETS=${BUCKETS:-}
FUNCTIONS_ENV_FILE=${FUNCTIONS_ENV_FILE:-$REPO/infra/functions.env}
FUNCTION_SECRETS=${FUNCTION_SECRETS:-}
AUDIT_KEY_SECRET=${AUDIT_KEY_SECRET:-platform-audit-hmac-keys}
AUDIT_HMAC_ACTIVE_KEY=${AUDIT_HMAC_ACTIVE_KEY:-audit-1}
FUNCTION_PREFIX=${FUNCTION_PREFIX:-}
RUNTIME_SA_NAME=${RUNTIME_SA_NAME:-platform-functions}
BATCH_SA_NAME=${BATCH_SA_NAME:-platform-batch}
PUSH_SA_NAME=${PUSH_SA_NAME:-platform-push}
BUILD_SERVICE_ACCOUNT=${BUILD_SERVICE_ACCOUNT:-}
TOPIC_RUN_REQUESTED=${TOPIC_RUN_REQUESTED:-run-requested}
TOPIC_JOB_STATUS=${TOPIC_JOB_STATUS:-batch-job-status}
TOPIC_INGESTION_REQUESTED=${TOPIC_INGESTION_REQUESTED:-ingestion-requested}
TOPIC_WEBHOOK_DELIVERY=${TOPIC_WEBHOOK_DELIVERY:-webhook-delivery}
WORKFLOWS_REGION=${WORKFLOWS_REGION:-$REGION}
INGESTION_WORKFLOW=${INGESTION_WORKFLOW:-platform-ingestion}
DEAD_LETTER_TOPIC=${DEAD_LETTER_TOPIC:-platform-dead-letter}
MAX_DELIVERY_ATTEMPTS=${MAX_DELIVERY_ATTEMPTS:-10}
RECONCILE_SCHEDULE=${RECONCILE_SCHEDULE:-*/5 * * * *}
SCHEDULER_TIME_ZONE=${SCHEDULER_TIME_ZONE:-Etc/UTC}
FUNCTION_MEMORY=${FUNCTION_MEMORY:-512Mi}
FUNCTION_CPU=${FUNCTION_CPU:-1}
FUNCTION_CONCURRENCY=${FUNCTION_CONCURRENCY:-40}
FUNCTION_MIN_INSTANCES=${FUNCTION_MIN_INSTANCES:-0}
FUNCTION_MAX_INSTANCES=${FUNCTION_MAX_INSTANCES:-20}
# Where browsers (and the CLI) reach every HTTP service: one host, so that the admin service's
# platform_session cookie reaches them all (docs/deploying.md, "The browser host"). Unset: the
# functions' shared https://REGION-PROJECT.cloudfunctions.net host; set: an external Application
# Load Balancer on this domain, made by this deploy, in front of them all.
BROWSER_DOMAIN=${BROWSER_DOMAIN:-}
LB_NAME=${LB_NAME:-platform-browser}
[[ -z "$BROWSER_DOMAIN" || "$BROWSER_DOMAIN" =~ ^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$ ]] ||
  die "BROWSER_DOMAIN '$BROWSER_DOMAIN' is not a domain name (lowercase, no scheme, no path: platform.lab.example)"
[[ -z "$BUILD_SERVICE_ACCOUNT" || "$BUILD_SERVICE_ACCOUNT" =~ ^[a-z0-9][a-z0-9-]*@[a-z0-9.-]+\.gserviceaccount\.com$ ]] ||
  die "BUILD_SERVICE_ACCOUNT '$BUILD_SERVICE_ACCOUNT' is not a service account e-mail"
[[ "$LB_NAME" =~ ^[a-z]([a-z0-9-]{0,40}[a-z0-9])?$ ]] || die "LB_NAME '$LB_NAME' is not a Compute Engine resource name prefix"
# The Node.js runtime of every function: package.json "config.functionsRuntime", its one place
# (test/unit/infra/runtime.test.ts checks that Google supports it and that "engines" agrees).
RUNTIME=$(node -p 'require(process.argv[1]).config.functionsRuntime' "$REPO/package.json")
[[ "$RUNTIME" =~ ^nodejs[0-9]+$ ]] || die "package.json config.functionsRuntime '$RUNTIME' is not a Cloud Functions Node.js runtime id"
[[ "$AUDIT_KEY_SECRET" =~ ^[A-Za-z0-9_-]{1,255}$ ]] || die "AUDIT_KEY_SECRET '$AUDIT_KEY_SECRET' is not a Secret Manager secret id"
[[ "$AUDIT_HMAC_ACTIVE_KEY" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]] || die "AUDIT_HMAC_ACTIVE_KEY '$AUDIT_HMAC_ACTIVE_KEY' is not a key id (letters, digits, '.', '_' and '-')"
# Only the default database: lib/db.ts opens no other.
DATABASE='(default)'

RUNTIME_SA="$RUNTIME_SA_NAME@$PROJECT_ID.iam.gserviceaccount.com"
BATCH_SA="$BATCH_SA_NAME@$PROJECT_ID.iam.gserviceaccount.com"
PUSH_SA="$PUSH_SA_NAME@$PROJECT_ID.iam.gserviceaccount.com"

# Function names are lowercase with hyphens (Cloud Functions gen2); entry points keep the code's names.
fn_name() { printf '%s%s' "$FUNCTION_PREFIX" "$(printf '%s' "$1" | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g; s/_/-/g' | tr '[:upper:]' '[:lower:]')"; }

# ---------------------------------------------------------------------------------------------
# Preflight
# ---------------------------------------------------------------------------------------------
command -v node >/dev/null || die "node (20 or later) is required"
[ -x "$REPO/node_modules/.bin/tsx" ] || die "run 'npm ci' first: the deploy reads the service registry and checks the configuration with the platform's own code"
$DRY_RUN || command -v gcloud >/dev/null || die "the Google Cloud CLI (gcloud) is required"
$DRY_RUN || command -v curl >/dev/null || die "curl is required (Firestore rules are released through the Firebase Rules API)"

tsx() { "$REPO/node_modules/.bin/tsx" "$@"; }

# What to deploy comes from the code: the service registry and the orchestrator's function list.
FUNCTION_LIST=$(TOPIC_RUN_REQUESTED="$TOPIC_RUN_REQUESTED" TOPIC_JOB_STATUS="$TOPIC_JOB_STATUS" TOPIC_INGESTION_REQUESTED="$TOPIC_INGESTION_REQUESTED" TOPIC_WEBHOOK_DELIVERY="$TOPIC_WEBHOOK_DELIVERY" tsx "$REPO/scripts/functions.ts") ||
  die "could not read the function lists (scripts/functions.ts)"
if [ -n "${SERVICES:-}" ]; then
  read -ra SERVICE_NAMES <<<"$SERVICES"
else
  mapfile -t SERVICE_NAMES < <(awk '$1 == "service" { print $2 }' <<<"$FUNCTION_LIST")
fi
# "<name> <topic>" of each CloudEvent function, and the names of the scheduled (HTTP) ones.
mapfile -t PUSHED < <(awk '$1 == "orchestrator" && $3 == "cloudevent" { print $2, $4 }' <<<"$FUNCTION_LIST")
mapfile -t SCHEDULED < <(awk '$1 == "orchestrator" && $3 == "http" { print $2 }' <<<"$FUNCTION_LIST")
# The functions a Cloud Workflows execution calls, step after step (a variant ingestion's steps).
mapfile -t WORKFLOW_STEPS < <(awk '$1 == "orchestrator" && $3 == "workflow-step" { print $2 }' <<<"$FUNCTION_LIST")
[ ${#SERVICE_NAMES[@]} -gt 0 ] || die "no HTTP service found in functions/services.ts"
[ ${#PUSHED[@]} -gt 0 ] || die "no orchestrator function found in orchestrator/functions.ts"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/platform-deploy.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

G=(--project="$PROJECT_ID")
PROJECT_NUMBER=$(capture PROJECT_NUMBER gcloud projects describe "$PROJECT_ID" --format='value(projectNumber)')
PUBSUB_AGENT="service-$PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com"
# The account Cloud Build builds the functions as: the operator's, or the project's Compute Engine
# default service account, the default build account of new projects since Google's change of
# mid-2024 (docs/deploying.md, "The build account"). Named on every deploy, so the build never runs
# as whichever default the organization's settings pick.
BUILD_SA=${BUILD_SERVICE_ACCOUNT:-$PROJECT_NUMBER-compute@developer.gserviceaccount.com}

# The browser host and the depth of the client's address behind it: Google's front end appends the
# client's address to X-Forwarded-For (1); an external Application Load Balancer appends the
# client's and its own (2). lib/request-log.ts clientIp reads the entry that many places from the right.
if [ -n "$BROWSER_DOMAIN" ]; then
  BROWSER_BASE="https://$BROWSER_DOMAIN"
  TRUSTED_PROXY_HOPS=2
  # Only through the load balancer: a request straight to the function would carry an address the client chose.
  SERVICE_INGRESS=internal-and-gclb
else
  BROWSER_BASE="https://$REGION-$PROJECT_ID.cloudfunctions.net"
  TRUSTED_PROXY_HOPS=1
  SERVICE_INGRESS=all
fi
# Every service of the registry (not only those deployed now) has its address on the browser host:
# <BROWSER_BASE>/<function name>, where the shared host, like the load balancer, hands the request on
# without that first path segment.
mapfile -t ALL_SERVICES < <(awk '$1 == "service" { print $2 }' <<<"$FUNCTION_LIST")
public_url() { printf '%s/%s' "$BROWSER_BASE" "$(fn_name "$1")"; }
# ADMIN_PUBLIC_URL, VARIANT_CACHE_PUBLIC_URL, ...: lib/config.ts publicUrlSetting.
url_setting() { printf '%s_PUBLIC_URL' "$(printf '%s' "$1" | tr '[:lower:]-' '[:upper:]_')"; }

# The functions' environment, the same for every function: the operator's file, the values this
# deploy decides, and a check by lib/config.ts. Secrets come from Secret Manager, never from the file.
ENV_ARGS=(
  --set "GOOGLE_CLOUD_PROJECT=$PROJECT_ID"
  --set "TOPIC_RUN_REQUESTED=$TOPIC_RUN_REQUESTED"
  --set "TOPIC_JOB_STATUS=$TOPIC_JOB_STATUS"
  --set "TOPIC_INGESTION_REQUESTED=$TOPIC_INGESTION_REQUESTED"
  --set "TOPIC_WEBHOOK_DELIVERY=$TOPIC_WEBHOOK_DELIVERY"
  --set "INGESTION_RUNNER=workflows"
  --set "WORKFLOWS_REGION=$WORKFLOWS_REGION"
  --set "INGESTION_WORKFLOW=$INGESTION_WORKFLOW"
  --set "BATCH_BACKEND=cloud"
  --set "BATCH_REGION=$BATCH_REGION"
  --set "STORAGE_BACKEND=gcs"
  --set "AUDIT_HMAC_ACTIVE_KEY=$AUDIT_HMAC_ACTIVE_KEY"
  # The platform's own identities, which act for every project or build it: no project may bind
  # one as its service account (docs/tenancy.md).
  --set "PLATFORM_SERVICE_ACCOUNTS=$RUNTIME_SA,$PUSH_SA,$BUILD_SA"
  --set "TRUSTED_PROXY_HOPS=$TRUSTED_PROXY_HOPS"
  # An instance admits itself the requests Cloud Run lets into it (--concurrency below): one number (docs/operating.md).
  --set "MAX_CONCURRENT_REQUESTS=$FUNCTION_CONCURRENCY"
  --secret AUDIT_HMAC_KEYS
  --default "LOG_LEVEL=info"
  # The environment's name in the discovery document (GET /api/v1/service-info): the operator's file may name it.
  --default "PLATFORM_ENVIRONMENT=$PROJECT_ID"
  --default "PLATFORM_VERSION=$(node -p 'require(process.argv[1]).version' "$REPO/package.json")"
)
for s in "${ALL_SERVICES[@]}"; do ENV_ARGS+=(--set "$(url_setting "$s")=$(public_url "$s")"); done
# The audit key ring comes from its own secret (created below when missing); `latest` is read as
# each instance starts, so a key added to the ring reaches every instance with the next deploy.
SECRET_NAMES=("$AUDIT_KEY_SECRET")
ALL_SECRETS="AUDIT_HMAC_KEYS=$AUDIT_KEY_SECRET:latest"
if [ -n "$FUNCTION_SECRETS" ]; then
  IFS=',' read -ra secret_refs <<<"$FUNCTION_SECRETS"
  for ref in "${secret_refs[@]}"; do
    [[ "$ref" =~ ^([A-Z][A-Z0-9_]*)=([A-Za-z0-9_-]+):([a-z0-9]+)$ ]] || die "FUNCTION_SECRETS entry '$ref' is not KEY=secret-name:version"
    [ "${BASH_REMATCH[1]}" != AUDIT_HMAC_KEYS ] || die "FUNCTION_SECRETS: AUDIT_HMAC_KEYS is provided by the deploy from AUDIT_KEY_SECRET ($AUDIT_KEY_SECRET); remove it"
    ENV_ARGS+=(--secret "${BASH_REMATCH[1]}")
    SECRET_NAMES+=("${BASH_REMATCH[2]}")
  done
  ALL_SECRETS="$ALL_SECRETS,$FUNCTION_SECRETS"
fi
if [ -f "$FUNCTIONS_ENV_FILE" ]; then
  ENV_ARGS+=(--file "$FUNCTIONS_ENV_FILE")
else
  echo "# note: no functions env file at $FUNCTIONS_ENV_FILE; deploying with the derived settings only (no OIDC login)" >&2
fi
ENV_YAML="$WORK/functions-env.yaml"
tsx "$REPO/scripts/deploy-env.ts" "${ENV_ARGS[@]}" >"$ENV_YAML" || die "fix the functions' environment (FUNCTIONS_ENV_FILE=$FUNCTIONS_ENV_FILE) and run again"
COLLECTION_PREFIX=$(sed -n 's/^COLLECTION_PREFIX: "\(.*\)"$/\1/p' "$ENV_YAML")

echo "# Deploying the pipeline platform to project $PROJECT_ID, region $REGION$($DRY_RUN && echo ' (dry run: nothing is changed)')"
echo "# HTTP services: ${SERVICE_NAMES[*]}"
echo "# Orchestrator functions: $(awk '$1 == "orchestrator" { printf "%s ", $2 }' <<<"$FUNCTION_LIST")"
echo "# Functions environment ($ENV_YAML):"
sed 's/^/#   /' "$ENV_YAML"

# ---------------------------------------------------------------------------------------------
step "APIs"
# ---------------------------------------------------------------------------------------------
run gcloud services enable "${G[@]}" \
  cloudfunctions.googleapis.com run.googleapis.com cloudbuild.googleapis.com artifactregistry.googleapis.com \
  firestore.googleapis.com firebaserules.googleapis.com pubsub.googleapis.com batch.googleapis.com \
  compute.googleapis.com logging.googleapis.com iam.googleapis.com iamcredentials.googleapis.com \
  cloudscheduler.googleapis.com secretmanager.googleapis.com storage.googleapis.com workflows.googleapis.com

# ---------------------------------------------------------------------------------------------
step "Audit key"
# ---------------------------------------------------------------------------------------------
# Audit events and chain heads are keyed with an HMAC whose keys live here only, never in the
# database (docs/audit.md). The first deploy makes the secret with one key, AUDIT_HMAC_ACTIVE_KEY,
# generated on this machine and piped to Secret Manager (never printed or written to disk); later
# deploys leave it alone: a rotation adds a version by hand (docs/audit.md, "Rotating the key").
if ! exists gcloud secrets describe "$AUDIT_KEY_SECRET" "${G[@]}"; then
  if $DRY_RUN; then
    printf '# the data: a new key ring "%s:<32 random bytes, base64>", made by scripts/audit-key.ts and piped in\n' "$AUDIT_HMAC_ACTIVE_KEY"
    quote gcloud secrets create "$AUDIT_KEY_SECRET" "${G[@]}" --replication-policy=automatic --data-file=-
  else
    tsx "$REPO/scripts/audit-key.ts" "$AUDIT_HMAC_ACTIVE_KEY" |
      gcloud secrets create "$AUDIT_KEY_SECRET" "${G[@]}" --replication-policy=automatic --data-file=- >/dev/null
  fi
fi

# ---------------------------------------------------------------------------------------------
step "Service accounts and their roles"
# ---------------------------------------------------------------------------------------------
ensure_sa() {
  local name=$1 display=$2
  exists gcloud iam service-accounts describe "$name@$PROJECT_ID.iam.gserviceaccount.com" "${G[@]}" ||
    run gcloud iam service-accounts create "$name" "${G[@]}" --display-name="$display"
}
ensure_sa "$RUNTIME_SA_NAME" "Pipeline platform: Cloud Functions runtime"
ensure_sa "$BATCH_SA_NAME" "Pipeline platform: Batch jobs (default project runner)"
ensure_sa "$PUSH_SA_NAME" "Pipeline platform: Pub/Sub push and Cloud Scheduler caller"

project_role() {
  run_q gcloud projects add-iam-policy-binding "$PROJECT_ID" --member="serviceAccount:$1" --role="$2" --condition=None --quiet
}
# The functions: records, Batch jobs (create, get, delete), logs (their own, and reading the jobs' task logs: GET /runs/{id}/logs).
project_role "$RUNTIME_SA" roles/datastore.user
project_role "$RUNTIME_SA" roles/batch.jobsEditor
project_role "$RUNTIME_SA" roles/logging.logWriter
project_role "$RUNTIME_SA" roles/logging.viewer
# The orchestrator starts a Cloud Workflows execution per variant ingestion.
project_role "$RUNTIME_SA" roles/workflows.invoker
# The ingestion workflow runs as the push account (it calls the private ingestionStep function) and logs.
project_role "$PUSH_SA" roles/logging.logWriter
# The Batch VMs: report to Batch, write logs, pull private pipeline containers.
project_role "$BATCH_SA" roles/batch.agentReporter
project_role "$BATCH_SA" roles/logging.logWriter
project_role "$BATCH_SA" roles/artifactregistry.reader

# The functions create jobs that run as the runner (actAs) and sign URLs as it (files service).
run_q gcloud iam service-accounts add-iam-policy-binding "$BATCH_SA" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/iam.serviceAccountUser
run_q gcloud iam service-accounts add-iam-policy-binding "$BATCH_SA" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/iam.serviceAccountTokenCreator
# Pub/Sub mints the OIDC tokens of push deliveries as the push account.
run_q gcloud iam service-accounts add-iam-policy-binding "$PUSH_SA" "${G[@]}" --member="serviceAccount:$PUBSUB_AGENT" --role=roles/iam.serviceAccountTokenCreator
# The build account builds the functions' images: "Cloud Build Service Account" (build logs, the
# uploaded source, Artifact Registry), the role Google's "Custom service account for Cloud Build"
# page has one add to the default build account, which new projects no longer give it.
project_role "$BUILD_SA" roles/cloudbuild.builds.builder
for secret in "${SECRET_NAMES[@]}"; do
  run_q gcloud secrets add-iam-policy-binding "$secret" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/secretmanager.secretAccessor
done

# ---------------------------------------------------------------------------------------------
step "Firestore: database, rules, indexes"
# ---------------------------------------------------------------------------------------------
exists gcloud firestore databases describe --database="$DATABASE" "${G[@]}" ||
  run gcloud firestore databases create --database="$DATABASE" --location="$FIRESTORE_LOCATION" --type=firestore-native --delete-protection --enable-pitr "${G[@]}"

# Rules: a ruleset made from firestore.rules, then the cloud.firestore release pointed at it
# (Firebase Rules API, with gcloud's credentials: no firebase-tools, no Java).
RULES_API="https://firebaserules.googleapis.com/v1/projects/$PROJECT_ID"
node -e 'const fs = require("fs"); process.stdout.write(JSON.stringify({ source: { files: [{ name: "firestore.rules", content: fs.readFileSync(process.argv[1], "utf8") }] } }))' \
  "$REPO/firestore.rules" >"$WORK/ruleset.json"
RELEASE="projects/$PROJECT_ID/releases/cloud.firestore"
if $DRY_RUN; then
  API_HEADERS=(-H "Authorization: Bearer <ACCESS_TOKEN>" -H "x-goog-user-project: $PROJECT_ID" -H "Content-Type: application/json")
  quote curl -sS --fail-with-body -X POST "${API_HEADERS[@]}" --data-binary "@$WORK/ruleset.json" "$RULES_API/rulesets"
  RULESET='<RULESET_NAME>'
else
  API_HEADERS=(-H "Authorization: Bearer $(gcloud auth print-access-token)" -H "x-goog-user-project: $PROJECT_ID" -H "Content-Type: application/json")
  RULESET=$(curl -sS --fail-with-body -X POST "${API_HEADERS[@]}" --data-binary "@$WORK/ruleset.json" "$RULES_API/rulesets" |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).name))')
fi
printf '{"release":{"name":"%s","rulesetName":"%s"}}' "$RELEASE" "$RULESET" >"$WORK/release-update.json"
printf '{"name":"%s","rulesetName":"%s"}' "$RELEASE" "$RULESET" >"$WORK/release-create.json"
if exists curl -sS --fail "${API_HEADERS[@]}" "$RULES_API/releases/cloud.firestore"; then
  run curl -sS --fail-with-body -o /dev/null -X PATCH "${API_HEADERS[@]}" --data-binary "@$WORK/release-update.json" "$RULES_API/releases/cloud.firestore"
else
  run curl -sS --fail-with-body -o /dev/null -X POST "${API_HEADERS[@]}" --data-binary "@$WORK/release-create.json" "$RULES_API/releases"
fi

# Indexes: one `composite create` per entry of firestore.indexes.json (collection names carry the
# deployment's COLLECTION_PREFIX); an existing index is left as it is.
mapfile -t INDEX_ARGS < <(node -e '
  const { indexes } = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  for (const i of indexes) {
    const fields = i.fields.map((f) => `--field-config=field-path=${f.fieldPath},` + (f.arrayConfig ? "array-config=contains" : `order=${f.order.toLowerCase()}`))
    console.log([`--collection-group=${process.argv[2]}${i.collectionGroup}`, `--query-scope=${i.queryScope === "COLLECTION_GROUP" ? "collection-group" : "collection"}`, ...fields].join(" "))
  }' "$REPO/firestore.indexes.json" "$COLLECTION_PREFIX")
for line in "${INDEX_ARGS[@]}"; do
  read -ra args <<<"$line"
  run_create gcloud firestore indexes composite create --database="$DATABASE" "${args[@]}" --async "${G[@]}"
done

# TTL policies: short-lived records delete themselves once their expiry passes (Firestore removes
# them within a day of it; the code never trusts an expired record meanwhile). Personal access
# tokens are kept, so that a user still sees an expired one in their list.
for ttl in service_tokens:expires_at sessions:expires_at login_states:expires_at used_assertions:expires_at idempotency_keys:expires login_throttle:expires report_signoffs:expires_at cli_logins:expires_at cli_access_tokens:expires_at cli_refresh_tokens:expires_at; do
  run gcloud firestore fields ttls update "${ttl#*:}" --collection-group="$COLLECTION_PREFIX${ttl%%:*}" --enable-ttl --database="$DATABASE" --async "${G[@]}"
done

# ---------------------------------------------------------------------------------------------
step "Buckets"
# ---------------------------------------------------------------------------------------------
for bucket in $BUCKETS; do
  exists gcloud storage buckets describe "gs://$bucket" "${G[@]}" ||
    run gcloud storage buckets create "gs://$bucket" "${G[@]}" --location="$BUCKET_LOCATION" --uniform-bucket-level-access --public-access-prevention
  # The runner reads inputs and writes outputs; the functions list run outputs.
  run_q gcloud storage buckets add-iam-policy-binding "gs://$bucket" "${G[@]}" --member="serviceAccount:$BATCH_SA" --role=roles/storage.objectAdmin
  run_q gcloud storage buckets add-iam-policy-binding "gs://$bucket" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/storage.objectViewer
done
# Every run reads the shared reference data (SHARED_REFERENCE_BUCKETS of the functions' environment).
SHARED_BUCKETS=$(sed -n 's/^SHARED_REFERENCE_BUCKETS: "\(.*\)"$/\1/p' "$ENV_YAML")
for shared in ${SHARED_BUCKETS//,/ }; do
  run_q gcloud storage buckets add-iam-policy-binding "gs://$shared" "${G[@]}" --member="serviceAccount:$BATCH_SA" --role=roles/storage.objectViewer
done
# A project added later: infra/add-project.sh grants the same for its bucket and runner (docs/deploying.md).

# ---------------------------------------------------------------------------------------------
step "Pub/Sub topics"
# ---------------------------------------------------------------------------------------------
for topic in "$TOPIC_RUN_REQUESTED" "$TOPIC_JOB_STATUS" "$TOPIC_INGESTION_REQUESTED" "$TOPIC_WEBHOOK_DELIVERY" "$DEAD_LETTER_TOPIC"; do
  exists gcloud pubsub topics describe "$topic" "${G[@]}" || run gcloud pubsub topics create "$topic" "${G[@]}"
done
# Compute and the reconciler publish run requests; Batch VMs publish job states as the runner.
run_q gcloud pubsub topics add-iam-policy-binding "$TOPIC_RUN_REQUESTED" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/pubsub.publisher
run_q gcloud pubsub topics add-iam-policy-binding "$TOPIC_JOB_STATUS" "${G[@]}" --member="serviceAccount:$BATCH_SA" --role=roles/pubsub.publisher
# The variant-cache service, the orchestrator and the reconciler request ingestions.
run_q gcloud pubsub topics add-iam-policy-binding "$TOPIC_INGESTION_REQUESTED" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/pubsub.publisher
run_q gcloud pubsub topics add-iam-policy-binding "$TOPIC_WEBHOOK_DELIVERY" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/pubsub.publisher
run_q gcloud pubsub topics add-iam-policy-binding "$DEAD_LETTER_TOPIC" "${G[@]}" --member="serviceAccount:$PUBSUB_AGENT" --role=roles/pubsub.publisher
# Undeliverable messages are kept a week for an operator to read, never dropped.
exists gcloud pubsub subscriptions describe "$DEAD_LETTER_TOPIC-hold" "${G[@]}" ||
  run gcloud pubsub subscriptions create "$DEAD_LETTER_TOPIC-hold" "${G[@]}" --topic="$DEAD_LETTER_TOPIC" --message-retention-duration=7d --expiration-period=never

# ---------------------------------------------------------------------------------------------
step "Function source"
# ---------------------------------------------------------------------------------------------
# One source folder for every function (see infra/stage-source.sh).
SOURCE="$WORK/source"
run bash "$REPO/infra/stage-source.sh" "$SOURCE"

COMMON_DEPLOY=(--gen2 --region="$REGION" "${G[@]}" --runtime="$RUNTIME" --source="$SOURCE" --service-account="$RUNTIME_SA" --env-vars-file="$ENV_YAML")
COMMON_DEPLOY+=(--set-secrets="$ALL_SECRETS" --build-service-account="projects/$PROJECT_ID/serviceAccounts/$BUILD_SA")

function_url() {
  capture "url of $1" gcloud functions describe "$1" --gen2 --region="$REGION" "${G[@]}" --format='value(serviceConfig.uri)'
}

# ---------------------------------------------------------------------------------------------
step "HTTP services"
# ---------------------------------------------------------------------------------------------
# Public at the network level: each service authenticates every /api/v1 request itself
# (Bearer token or session), as the API specifies. Behind a load balancer (BROWSER_DOMAIN), reached
# through it only.
for s in "${SERVICE_NAMES[@]}"; do
  run gcloud functions deploy "$(fn_name "$s")" "${COMMON_DEPLOY[@]}" --entry-point="$s" --trigger-http --allow-unauthenticated \
    --ingress-settings="$SERVICE_INGRESS" \
    --memory="$FUNCTION_MEMORY" --cpu="$FUNCTION_CPU" --concurrency="$FUNCTION_CONCURRENCY" \
    --min-instances="$FUNCTION_MIN_INSTANCES" --max-instances="$FUNCTION_MAX_INSTANCES" --timeout=60s
done

# ---------------------------------------------------------------------------------------------
step "Browser host"
# ---------------------------------------------------------------------------------------------
# With BROWSER_DOMAIN: a global external Application Load Balancer on that domain, with a
# Google-managed certificate, one serverless network endpoint group and backend service per HTTP
# service, and a URL map that sends https://DOMAIN/<function>/... to the function without its first
# path segment, as the shared cloudfunctions.net host does; plain http is redirected to https.
# Without it, the shared host needs nothing made.
LB_ADDRESS=
if [ -n "$BROWSER_DOMAIN" ]; then
  GL=(--global "${G[@]}")
  exists gcloud compute addresses describe "$LB_NAME-ip" "${GL[@]}" || run gcloud compute addresses create "$LB_NAME-ip" "${GL[@]}" --ip-version=IPV4
  LB_ADDRESS=$(capture "address of $LB_NAME-ip" gcloud compute addresses describe "$LB_NAME-ip" "${GL[@]}" --format='value(address)')
  exists gcloud compute ssl-certificates describe "$LB_NAME-cert" "${GL[@]}" ||
    run gcloud compute ssl-certificates create "$LB_NAME-cert" "${GL[@]}" --domains="$BROWSER_DOMAIN"
  BACKENDS="https://www.googleapis.com/compute/v1/projects/$PROJECT_ID/global/backendServices"
  URL_MAP="$WORK/url-map.yaml"
  {
    echo "name: $LB_NAME"
    echo "defaultService: $BACKENDS/$(fn_name admin)-backend"
    echo "hostRules:"
    echo "- hosts: ['$BROWSER_DOMAIN']"
    echo "  pathMatcher: services"
    echo "pathMatchers:"
    echo "- name: services"
    echo "  defaultService: $BACKENDS/$(fn_name admin)-backend"
    echo "  routeRules:"
  } >"$URL_MAP"
  priority=0
  for s in "${ALL_SERVICES[@]}"; do
    name=$(fn_name "$s")
    exists gcloud compute network-endpoint-groups describe "$name-neg" --region="$REGION" "${G[@]}" ||
      run gcloud compute network-endpoint-groups create "$name-neg" --region="$REGION" "${G[@]}" --network-endpoint-type=serverless --cloud-function-name="$name"
    if ! exists gcloud compute backend-services describe "$name-backend" "${GL[@]}"; then
      run gcloud compute backend-services create "$name-backend" "${GL[@]}" --load-balancing-scheme=EXTERNAL_MANAGED
      run_q gcloud compute backend-services add-backend "$name-backend" "${GL[@]}" --network-endpoint-group="$name-neg" --network-endpoint-group-region="$REGION"
    fi
    priority=$((priority + 1))
    {
      echo "  - priority: $priority"
      echo "    matchRules:"
      echo "    - prefixMatch: /$name/"
      echo "    service: $BACKENDS/$name-backend"
      echo "    routeAction:"
      echo "      urlRewrite:"
      echo "        pathPrefixRewrite: /"
    } >>"$URL_MAP"
  done
  show_file "URL map $LB_NAME" "$URL_MAP"
  run_q gcloud compute url-maps import "$LB_NAME" "${GL[@]}" --source="$URL_MAP" --quiet
  exists gcloud compute target-https-proxies describe "$LB_NAME-https" "${GL[@]}" ||
    run gcloud compute target-https-proxies create "$LB_NAME-https" "${GL[@]}" --url-map="$LB_NAME" --ssl-certificates="$LB_NAME-cert"
  exists gcloud compute forwarding-rules describe "$LB_NAME-https" "${GL[@]}" ||
    run gcloud compute forwarding-rules create "$LB_NAME-https" "${GL[@]}" --load-balancing-scheme=EXTERNAL_MANAGED \
      --address="$LB_NAME-ip" --target-https-proxy="$LB_NAME-https" --ports=443
  REDIRECT_MAP="$WORK/redirect-map.yaml"
  printf 'name: %s\ndefaultUrlRedirect:\n  httpsRedirect: true\n  redirectResponseCode: MOVED_PERMANENTLY_DEFAULT\n' "$LB_NAME-redirect" >"$REDIRECT_MAP"
  show_file "URL map $LB_NAME-redirect" "$REDIRECT_MAP"
  run_q gcloud compute url-maps import "$LB_NAME-redirect" "${GL[@]}" --source="$REDIRECT_MAP" --quiet
  exists gcloud compute target-http-proxies describe "$LB_NAME-http" "${GL[@]}" ||
    run gcloud compute target-http-proxies create "$LB_NAME-http" "${GL[@]}" --url-map="$LB_NAME-redirect"
  exists gcloud compute forwarding-rules describe "$LB_NAME-http" "${GL[@]}" ||
    run gcloud compute forwarding-rules create "$LB_NAME-http" "${GL[@]}" --load-balancing-scheme=EXTERNAL_MANAGED \
      --address="$LB_NAME-ip" --target-http-proxy="$LB_NAME-http" --ports=80
fi

# ---------------------------------------------------------------------------------------------
step "Orchestrator functions"
# ---------------------------------------------------------------------------------------------
# Reached only by Pub/Sub push and Cloud Scheduler, with OIDC tokens of the push account: no
# public access. One delivery at a time per instance keeps Batch calls paced.
deploy_orchestrator() {
  local entry=$1 name
  name=$(fn_name "$entry")
  run gcloud functions deploy "$name" "${COMMON_DEPLOY[@]}" --entry-point="$entry" --trigger-http --no-allow-unauthenticated \
    --memory="$FUNCTION_MEMORY" --cpu="$FUNCTION_CPU" --concurrency=1 --max-instances="$FUNCTION_MAX_INSTANCES" --timeout=540s
  run_q gcloud functions add-invoker-policy-binding "$name" --region="$REGION" "${G[@]}" --member="serviceAccount:$PUSH_SA"
}
for line in "${PUSHED[@]}"; do deploy_orchestrator "${line%% *}"; done
for entry in "${SCHEDULED[@]}"; do deploy_orchestrator "$entry"; done
for entry in "${WORKFLOW_STEPS[@]}"; do deploy_orchestrator "$entry"; done

# ---------------------------------------------------------------------------------------------
step "Push subscriptions"
# ---------------------------------------------------------------------------------------------
# The endpoint path names the topic, as functions-framework expects of a raw Pub/Sub push (the
# local suite does the same); the OIDC audience is the function's own address. Failed deliveries
# back off, then go to the dead-letter topic.
ensure_push() {
  local entry=$1 topic=$2 sub="$2-push" url
  url=$(function_url "$(fn_name "$entry")")
  local push=(--push-endpoint="$url/projects/$PROJECT_ID/topics/$topic" --push-auth-service-account="$PUSH_SA" --push-auth-token-audience="$url"
    --ack-deadline=600 --min-retry-delay=10s --max-retry-delay=600s --dead-letter-topic="$DEAD_LETTER_TOPIC" --max-delivery-attempts="$MAX_DELIVERY_ATTEMPTS")
  if exists gcloud pubsub subscriptions describe "$sub" "${G[@]}"; then
    run gcloud pubsub subscriptions update "$sub" "${G[@]}" "${push[@]}"
  else
    run gcloud pubsub subscriptions create "$sub" "${G[@]}" --topic="$topic" --message-retention-duration=7d --expiration-period=never "${push[@]}"
  fi
  run_q gcloud pubsub subscriptions add-iam-policy-binding "$sub" "${G[@]}" --member="serviceAccount:$PUBSUB_AGENT" --role=roles/pubsub.subscriber
}
for line in "${PUSHED[@]}"; do
  read -r entry topic <<<"$line"
  case " $TOPIC_RUN_REQUESTED $TOPIC_JOB_STATUS $TOPIC_INGESTION_REQUESTED $TOPIC_WEBHOOK_DELIVERY " in
    *" $topic "*) ;;
    *) die "orchestrator function $entry listens on topic $topic, which this deploy does not create" ;;
  esac
  ensure_push "$entry" "$topic"
done

# ---------------------------------------------------------------------------------------------
step "Reconciler schedule"
# ---------------------------------------------------------------------------------------------
for entry in "${SCHEDULED[@]}"; do
  name=$(fn_name "$entry")
  url=$(function_url "$name")
  job="$name-schedule"
  schedule=(--location="$SCHEDULER_REGION" "${G[@]}" --schedule="$RECONCILE_SCHEDULE" --time-zone="$SCHEDULER_TIME_ZONE" --uri="$url"
    --http-method=POST --message-body='{}' --oidc-service-account-email="$PUSH_SA" --oidc-token-audience="$url" --attempt-deadline=540s)
  if exists gcloud scheduler jobs describe "$job" --location="$SCHEDULER_REGION" "${G[@]}"; then
    run gcloud scheduler jobs update http "$job" "${schedule[@]}" --update-headers=Content-Type=application/json
  else
    run gcloud scheduler jobs create http "$job" "${schedule[@]}" --headers=Content-Type=application/json
  fi
done

# ---------------------------------------------------------------------------------------------
step "Variant ingestion workflow"
# ---------------------------------------------------------------------------------------------
# Each step of an ingestion is a call of the ingestionStep function, with the workflow's retries
# and an execution record per ingestion; it runs as the push account, the function's only invoker.
[ ${#WORKFLOW_STEPS[@]} -eq 1 ] || die "expected one workflow-step function in orchestrator/functions.ts, found ${#WORKFLOW_STEPS[@]}"
step_url=$(function_url "$(fn_name "${WORKFLOW_STEPS[0]}")")
run gcloud workflows deploy "$INGESTION_WORKFLOW" --location="$WORKFLOWS_REGION" "${G[@]}" --source="$REPO/infra/workflows/ingestion.yaml" \
  --service-account="$PUSH_SA" --set-env-vars="STEP_URL=$step_url" --call-log-level=log-errors-only

# ---------------------------------------------------------------------------------------------
step "Addresses"
# ---------------------------------------------------------------------------------------------
# Every address a person or the CLI uses is on the browser host; Pub/Sub, Cloud Scheduler and
# Workflows call the orchestrator functions at their own run.app addresses (above).
echo "# Browser host: $BROWSER_BASE (the client's address: TRUSTED_PROXY_HOPS=$TRUSTED_PROXY_HOPS)"
if [ -n "$BROWSER_DOMAIN" ]; then
  echo "# DNS: point $BROWSER_DOMAIN (an A record) at $LB_ADDRESS; its certificate becomes active once the name resolves there"
fi
for s in "${SERVICE_NAMES[@]}"; do
  echo "# $s: $(public_url "$s")/api/v1 (docs: $(public_url "$s")/docs, $(public_url "$s")/redoc)"
done
echo "# OIDC redirect URI to register at the identity provider: $(public_url admin)/api/v1/auth/callback"
echo "# The CLI finds every service from the admin service's address (docs/discovery.md):"
echo "#   npx platform login --url $(public_url admin) --profile <profile>"
echo "# First platform administrator (once, as yourself, with your Google credentials; docs/deploying.md):"
echo "#   $(quote GOOGLE_CLOUD_PROJECT="$PROJECT_ID" ${COLLECTION_PREFIX:+COLLECTION_PREFIX="$COLLECTION_PREFIX"} AUDIT_HMAC_ACTIVE_KEY="$AUDIT_HMAC_ACTIVE_KEY") AUDIT_HMAC_KEYS=\"\$($(quote gcloud secrets versions access latest --secret="$AUDIT_KEY_SECRET" "${G[@]}"))\" npm run bootstrap-admin -- --email <e-mail>"
$DRY_RUN && echo "# dry run complete: nothing was changed" || echo "# deployed"

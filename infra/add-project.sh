#!/usr/bin/env bash
# Prepares Google Cloud for one more platform project (docs/deploying.md, "Adding a project"): its
# runner service account and its bucket, made when missing, and what each identity that reads or
# writes the bucket needs: the runner (the project's Batch jobs and its file operations), and the
# functions' runtime account (run outputs, ingestion source checks and VCF reads, as itself; the
# runner's tokens and signatures). Safe to run again.
#
#   bash infra/add-project.sh --config infra/production.env --bucket BUCKET --account NAME [--dry-run]
#
# Run it after the project is created on the platform with this bucket and bound to this account
# (PUT /api/v1/projects/{id}/credentials): the platform claims both for that project first, so no
# other project can take an account the platform is about to be allowed to act as.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY_RUN=false
SCRIPT=add-project
# shellcheck source=infra/lib.sh
. "$REPO/infra/lib.sh"

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  echo
  echo "Options:"
  echo "  --bucket NAME    the project's bucket (made when missing, in BUCKET_LOCATION)"
  echo "  --account NAME   its runner: a service account name of PROJECT_ID (made when missing), or the e-mail of an existing one"
  echo "  --dry-run        print every command instead of running it (nothing is created or changed)"
  echo "  --config FILE    read the variables from FILE (the deploy's, bash KEY=VALUE lines)"
  echo "  -h, --help       this text"
}

BUCKET=
ACCOUNT=
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=true ;;
    --bucket | --account | --config)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --bucket) BUCKET=$2 ;;
        --account) ACCOUNT=$2 ;;
        --config)
          [ -r "$2" ] || die "cannot read the config file $2"
          # shellcheck disable=SC1090
          set -a && . "$2" && set +a
          ;;
      esac
      shift
      ;;
    -h | --help) usage && exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

[ -n "${PROJECT_ID:-}" ] || die "PROJECT_ID is required: the Google Cloud project the platform is deployed to"
[[ "$PROJECT_ID" =~ ^[a-z][a-z0-9-]{4,28}[a-z0-9]$ ]] || die "PROJECT_ID '$PROJECT_ID' is not a Google Cloud project id"
[ -n "$BUCKET" ] || die "--bucket is required: the project's bucket"
[[ "$BUCKET" =~ ^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$ ]] || die "--bucket '$BUCKET' is not a bucket name"
[ -n "$ACCOUNT" ] || die "--account is required: the project's runner service account"
REGION=${REGION:-europe-west4}
BUCKET_LOCATION=${BUCKET_LOCATION:-$REGION}
RUNTIME_SA_NAME=${RUNTIME_SA_NAME:-platform-functions}
PUSH_SA_NAME=${PUSH_SA_NAME:-platform-push}
TOPIC_JOB_STATUS=${TOPIC_JOB_STATUS:-batch-job-status}
# Shared reference data every project's runs read: the functions' SHARED_REFERENCE_BUCKETS, from
# their env file (FUNCTIONS_ENV_FILE, as the deploy reads it) unless set here.
FUNCTIONS_ENV_FILE=${FUNCTIONS_ENV_FILE:-$REPO/infra/functions.env}
if [ -z "${SHARED_REFERENCE_BUCKETS:-}" ] && [ -r "$FUNCTIONS_ENV_FILE" ]; then
  SHARED_REFERENCE_BUCKETS=$(sed -n -E "s/^(export[[:space:]]+)?SHARED_REFERENCE_BUCKETS[[:space:]]*=[[:space:]]*[\"']?([^\"']*)[\"']?[[:space:]]*$/\2/p" "$FUNCTIONS_ENV_FILE")
fi
SHARED_REFERENCE_BUCKETS=${SHARED_REFERENCE_BUCKETS:-}
RUNTIME_SA="$RUNTIME_SA_NAME@$PROJECT_ID.iam.gserviceaccount.com"
PUSH_SA="$PUSH_SA_NAME@$PROJECT_ID.iam.gserviceaccount.com"
G=(--project="$PROJECT_ID")

if [[ "$ACCOUNT" == *@* ]]; then
  [[ "$ACCOUNT" =~ ^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z0-9.-]+\.gserviceaccount\.com$ ]] || die "--account '$ACCOUNT' is not a service account e-mail"
  RUNNER=$ACCOUNT
else
  [[ "$ACCOUNT" =~ ^[a-z][a-z0-9-]{4,28}[a-z0-9]$ ]] || die "--account '$ACCOUNT' is not a service account name (6 to 30 lowercase letters, digits and '-')"
  RUNNER="$ACCOUNT@$PROJECT_ID.iam.gserviceaccount.com"
fi
# The platform acts as these for every project: a runner of one project would lend them to it.
case "$RUNNER" in
  "$RUNTIME_SA" | "$PUSH_SA") die "--account $RUNNER is one of the platform's own accounts; give the project an account of its own" ;;
esac

echo "# Adding a project's bucket gs://$BUCKET and runner $RUNNER to the platform in $PROJECT_ID$($DRY_RUN && echo ' (dry run: nothing is changed)')"

# ---------------------------------------------------------------------------------------------
step "The runner and the bucket"
# ---------------------------------------------------------------------------------------------
if [ "$RUNNER" = "$ACCOUNT@$PROJECT_ID.iam.gserviceaccount.com" ]; then
  exists gcloud iam service-accounts describe "$RUNNER" "${G[@]}" ||
    run gcloud iam service-accounts create "$ACCOUNT" "${G[@]}" --display-name="Pipeline platform: runner of the project of gs://$BUCKET"
fi
exists gcloud storage buckets describe "gs://$BUCKET" "${G[@]}" ||
  run gcloud storage buckets create "gs://$BUCKET" "${G[@]}" --location="$BUCKET_LOCATION" --uniform-bucket-level-access --public-access-prevention

# ---------------------------------------------------------------------------------------------
step "What the runner needs"
# ---------------------------------------------------------------------------------------------
# As the default runner has them (infra/deploy.sh): the Batch VMs report to Batch, write logs, pull
# private pipeline containers and publish their job states; the jobs and the files service read
# and write the bucket; every run reads the shared reference data.
for role in roles/batch.agentReporter roles/logging.logWriter roles/artifactregistry.reader; do
  run_q gcloud projects add-iam-policy-binding "$PROJECT_ID" --member="serviceAccount:$RUNNER" --role="$role" --condition=None --quiet
done
run_q gcloud pubsub topics add-iam-policy-binding "$TOPIC_JOB_STATUS" "${G[@]}" --member="serviceAccount:$RUNNER" --role=roles/pubsub.publisher
run_q gcloud storage buckets add-iam-policy-binding "gs://$BUCKET" "${G[@]}" --member="serviceAccount:$RUNNER" --role=roles/storage.objectAdmin
for shared in ${SHARED_REFERENCE_BUCKETS//,/ }; do
  run_q gcloud storage buckets add-iam-policy-binding "gs://$shared" "${G[@]}" --member="serviceAccount:$RUNNER" --role=roles/storage.objectViewer
done

# ---------------------------------------------------------------------------------------------
step "What the functions need"
# ---------------------------------------------------------------------------------------------
# The compute and variant-cache services and the orchestrator read the bucket as themselves (run
# outputs listed, an ingestion's source checked, its VCF read); the functions start the project's
# Batch jobs as the runner (actAs), and the files service reaches the bucket and signs its addresses
# as the runner (short-lived tokens and signBlob through IAM Credentials).
run_q gcloud storage buckets add-iam-policy-binding "gs://$BUCKET" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/storage.objectViewer
run_q gcloud iam service-accounts add-iam-policy-binding "$RUNNER" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/iam.serviceAccountUser
run_q gcloud iam service-accounts add-iam-policy-binding "$RUNNER" "${G[@]}" --member="serviceAccount:$RUNTIME_SA" --role=roles/iam.serviceAccountTokenCreator

$DRY_RUN && echo "# dry run complete: nothing was changed" || echo "# the project's bucket and runner are ready"

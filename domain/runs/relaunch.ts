import type { AuditInput } from '../../lib/audit.js'
import { allow, conflictWith, deny, type Decision } from '../../lib/decision.js'
import { TERMINAL, type RunStatus } from './status.js'
import type { RunRecord } from './store.js'

/**
 * Relaunching a run: a new run of the same pipeline version with every setting of the first (its
 * execution spec as submitted, params, tags, profile, order), some of them changed on request,
 * linked both ways. A resumed relaunch also continues the first run's work session (its work
 * directory in the project bucket and, for Nextflow, its session id), so that the engine reuses
 * the tasks that already completed: `nextflow -resume`, Cromwell's call cache, or, for a
 * container_entrypoint pipeline, whatever the container does with PLATFORM_WORK_DIR and
 * PLATFORM_RESUME (domain/runs/batch-job.ts).
 */

/** A run's params changed by a JSON Merge Patch (RFC 7396, one level): a value replaces, null removes. */
export type ParamsPatch = Record<string, unknown>

export interface RelaunchCommand {
  /** Continue the first run's work session (its cache and work directory) instead of starting afresh. */
  resume: boolean
  params?: ParamsPatch
  tags?: string[]
  profile?: string
  /** The new run's id and name, chosen by the store. */
  run: { id: string; name: string }
}

export type RelaunchSource = Pick<
  RunRecord,
  'id' | 'name' | 'project_id' | 'org_id' | 'pipeline_id' | 'status' | 'params' | 'tags' | 'profile' | 'work_session'
>

/** What the new run takes beyond the first run's settings, and where it comes from. */
export interface RelaunchPlan {
  params: Record<string, unknown>
  tags: string[]
  profile?: string
  /** The work session the new run works in: the first run's when resumed, its own otherwise. */
  work_session: string
  relaunched_from: { id: string; name: string; resume: boolean }
  /** Names of the settings the relaunch changed (`params.<name>`, `tags`, `profile`), for the audit trail. */
  changed: string[]
}

export function applyParamsPatch(params: Record<string, unknown>, patch: ParamsPatch = {}): Record<string, unknown> {
  // Built from entries, never by assignment: a param named __proto__ stays a param.
  // A changed param keeps its place; new ones follow.
  const kept = Object.entries(params).flatMap(([k, v]): Array<[string, unknown]> =>
    !Object.hasOwn(patch, k) ? [[k, v]] : patch[k] === null ? [] : [[k, patch[k]]],
  )
  const added = Object.entries(patch).filter(([k, v]) => !Object.hasOwn(params, k) && v !== null)
  return Object.fromEntries([...kept, ...added])
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
/** A param's own value: a param named like a property of every object (valueOf) is absent unless set. */
const own = (params: Record<string, unknown>, k: string) => (Object.hasOwn(params, k) ? params[k] : undefined)

/** What the store read of the first run's work session, for a resume: a run of it still queued or running, if any. */
export interface SessionState {
  active?: { name: string; status: RunStatus }
}

export function decideRelaunch(first: RelaunchSource, cmd: RelaunchCommand, session: SessionState = {}): Decision<RelaunchPlan> {
  // Two engines writing one session's cache and work directory at once corrupt both: a resume
  // waits until no run of the session is queued or running, the first run included.
  if (cmd.resume && !TERMINAL.has(first.status)) {
    return deny(conflictWith(`run ${first.name} is still ${first.status}; it can be resumed once it has ended (or relaunched afresh now)`))
  }
  if (cmd.resume && !first.work_session) {
    return deny(conflictWith(`run ${first.name} was submitted before runs kept a work session; relaunch it without resume`))
  }
  if (cmd.resume && session.active) {
    return deny(
      conflictWith(
        `run ${session.active.name} is ${session.active.status} in the work session of run ${first.name}; resume once it has ended, or relaunch afresh now`,
      ),
    )
  }
  const params = applyParamsPatch(first.params, cmd.params)
  const tags = cmd.tags ?? first.tags
  const profile = cmd.profile ?? first.profile
  const changed = [
    ...[...new Set([...Object.keys(first.params), ...Object.keys(params)])]
      .filter((k) => !sameJson(own(first.params, k), own(params, k)))
      .sort()
      .map((k) => `params.${k}`),
    ...(sameJson(tags, first.tags) ? [] : ['tags']),
    ...(profile === first.profile ? [] : ['profile']),
  ]
  const work_session = cmd.resume ? first.work_session! : cmd.run.id
  const plan: RelaunchPlan = {
    params,
    tags,
    ...(profile !== undefined ? { profile } : {}),
    work_session,
    relaunched_from: { id: first.id, name: first.name, resume: cmd.resume },
    changed,
  }
  const action = cmd.resume ? 'resumed' : 'relaunched'
  const events: AuditInput[] = [
    {
      action: 'run.submitted',
      org_id: first.org_id,
      project_id: first.project_id,
      entity: { type: 'run', id: cmd.run.id, parent: first.pipeline_id },
      change: { to: 'queued', reason: `${action} from run ${first.name}`, ...(changed.length ? { fields: changed } : {}) },
    },
    {
      action: 'run.relaunched',
      org_id: first.org_id,
      project_id: first.project_id,
      entity: { type: 'run', id: first.id, parent: first.pipeline_id },
      change: { reason: `${action} as run ${cmd.run.name} (${cmd.run.id})`, ...(changed.length ? { fields: changed } : {}) },
    },
  ]
  return allow(plan, events)
}

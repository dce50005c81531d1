import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { failureOf } from '../../../../domain/runs/failure.js'
import { RUN_STATUSES, TERMINAL, type RunStatus } from '../../../../domain/runs/status.js'
import {
  decideWesSubmission,
  engineVersionOf,
  parseWorkflowUrl,
  tagsFromWes,
  tagsToWes,
  WES_STATES,
  wesState,
  wesTime,
  workflowUrlOf,
  type WesPipeline,
  type WesRunRequest,
  type WesState,
} from '../../../../domain/runs/wes.js'

const LOCAL_EXIT_1 =
  'the Batch job failed: Task state is updated from RUNNING to FAILED on the local executor with exit code 1 in runnable 1 (fail-local). Last lines of stderr:\nboom'
const CLOUD_EXIT_3 = 'the Batch job failed: Task state is updated from RUNNING to FAILED on zones/europe-west1-b/instances/123 with exit code 3.'

describe('failureOf(): whose fault a failed run is', () => {
  it.each([
    ['a task that exited 1 on the local executor', LOCAL_EXIT_1, { kind: 'executor', exit_code: 1 }],
    ['a task that exited 3 on Cloud Batch', CLOUD_EXIT_3, { kind: 'executor', exit_code: 3 }],
    ['a command not found (127) in the pipeline', 'the Batch job failed: … with exit code 127 in runnable 1', { kind: 'executor', exit_code: 127 }],
    [
      'a preempted VM (Batch exit code 50001)',
      'the Batch job failed: Task state is updated from RUNNING to FAILED with exit code 50001.',
      { kind: 'system', exit_code: 50001 },
    ],
    ['a task past its maxRunDuration (50005)', 'the Batch job failed: … with exit code 50005 in runnable 1', { kind: 'system', exit_code: 50005 }],
    ['a job Batch rejected', 'Batch rejected the job: INVALID_ARGUMENT machine type', { kind: 'system' }],
    ['a job that failed without a message', 'the Batch job failed without an error message', { kind: 'system' }],
    ['no message at all', undefined, { kind: 'system' }],
    ['an exit code only in the quoted stderr', 'the Batch job failed: VM lost\nmy tool: exit code 2', { kind: 'system' }],
  ] as const)('reads %s', (_, message, expected) => {
    expect(failureOf(message)).toEqual(expected)
  })

  it('never calls a failure the pipeline’s own without an exit code, and ignores whatever stderr lines follow the first', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (first, rest) => {
        const line = first.replaceAll('\n', ' ')
        const alone = failureOf(line)
        if (alone.kind === 'executor') expect(alone.exit_code).toBeTypeOf('number')
        expect(failureOf(`${line}\n${rest}`)).toEqual(alone)
      }),
    )
  })
})

describe('wesState(): a run’s status in WES terms', () => {
  const cases: Array<[string, Parameters<typeof wesState>[0], WesState]> = [
    ['a queued run', { status: 'queued', job_cleanup_pending: false }, 'QUEUED'],
    ['a running run', { status: 'running', job_cleanup_pending: false }, 'RUNNING'],
    ['a succeeded run', { status: 'succeeded', job_cleanup_pending: false }, 'COMPLETE'],
    ['a run whose pipeline exited 1', { status: 'failed', job_cleanup_pending: false, error_message: LOCAL_EXIT_1 }, 'EXECUTOR_ERROR'],
    ['a run Batch rejected', { status: 'failed', job_cleanup_pending: false, error_message: 'Batch rejected the job: quota' }, 'SYSTEM_ERROR'],
    [
      'a run with a recorded system failure',
      { status: 'failed', job_cleanup_pending: false, error_message: LOCAL_EXIT_1, failure: { kind: 'system' } },
      'SYSTEM_ERROR',
    ],
    ['a cancelled run whose job is still being deleted', { status: 'cancelled', job_cleanup_pending: true }, 'CANCELING'],
    ['a cancelled run whose job is gone', { status: 'cancelled', job_cleanup_pending: false }, 'CANCELED'],
  ]
  it.each(cases)('reads %s as %s', (_, run, expected) => {
    expect(wesState(run)).toBe(expected)
  })

  it('gives every run a WES state, in progress exactly while the run is', () => {
    const inProgress = new Set<WesState>(['QUEUED', 'RUNNING', 'CANCELING'])
    fc.assert(
      fc.property(
        fc.constantFrom<RunStatus>(...RUN_STATUSES),
        fc.boolean(),
        fc.option(fc.string(), { nil: undefined }),
        (status, pending, message) => {
          const state = wesState({ status, job_cleanup_pending: pending, error_message: message })
          expect(WES_STATES).toContain(state)
          // CANCELING is a cancelled run still stopping: finished for the platform, in progress for WES.
          if (!(status === 'cancelled' && pending)) expect(inProgress.has(state)).toBe(!TERMINAL.has(status))
        },
      ),
    )
  })
})

describe('workflow_url: a catalogue pipeline by slug and version', () => {
  it.each([
    ['hello-local@1.0.0', { slug: 'hello-local', version: '1.0.0' }],
    ['hereditary-mock@2.1.0-rc.1', { slug: 'hereditary-mock', version: '2.1.0-rc.1' }],
    ['hello-local', undefined],
    ['@1.0.0', undefined],
    ['Hello@1.0.0', undefined],
    ['https://example.org/main.nf', undefined],
    ['hello-local@1.0.0@2', undefined],
    ['hello-local@', undefined],
  ])('reads %s', (url, expected) => {
    expect(parseWorkflowUrl(url)).toEqual(expected)
  })

  it('reads back every workflow_url it writes for a run', () => {
    const slug = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/)
    const version = fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map((v) => v.join('.'))
    fc.assert(
      fc.property(slug, version, (pipeline_slug, pipeline_version) => {
        expect(parseWorkflowUrl(workflowUrlOf({ pipeline_slug, pipeline_version }))).toEqual({ slug: pipeline_slug, version: pipeline_version })
      }),
    )
  })
})

describe('tags: WES key/value pairs as platform tags', () => {
  it.each([
    [{ sample: 'NA12878', urgent: '' }, ['sample=NA12878', 'urgent']],
    [{ note: 'a=b' }, ['note=a=b']],
    [{}, []],
  ])('writes %j as %j', (wes, platform) => {
    expect(tagsFromWes(wes)).toEqual(platform)
    expect(tagsToWes(platform)).toEqual(wes)
  })

  it('round-trips every WES tag map whose keys are non-empty and without =', () => {
    const key = fc.string({ minLength: 1 }).filter((k) => !k.includes('='))
    fc.assert(
      fc.property(fc.dictionary(key, fc.string()), (tags) => {
        expect(tagsToWes(tagsFromWes(tags))).toEqual(tags)
      }),
    )
  })

  it('keeps the later of two platform tags with one key', () => {
    expect(tagsToWes(['stage=1', 'stage=2'])).toEqual({ stage: '2' })
  })

  it('reads a tag named __proto__ as a key, never as the prototype of the tags', () => {
    const tags = tagsToWes(['__proto__=x'])
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype)
    expect(Object.entries(tags)).toEqual([['__proto__', 'x']])
  })
})

describe('engineVersionOf(): the engine version is the image tag', () => {
  it.each([
    ['nextflow/nextflow:24.10.0', '24.10.0'],
    ['broadinstitute/cromwell:87', '87'],
    ['localhost:5000/tools/hello', 'latest'],
    ['localhost:5000/tools/hello:2.1', '2.1'],
    ['busybox@sha256:abc', 'latest'],
  ])('reads %s as %s', (image, expected) => {
    expect(engineVersionOf(image)).toBe(expected)
  })
})

describe('decideWesSubmission(): what a WES run request must say', () => {
  const pipeline: WesPipeline = { slug: 'nf-demo', version: '1.0.0', type: 'direct_nextflow', container: 'nextflow/nextflow:24.10.0' }
  const base: WesRunRequest = {
    workflow_url: 'nf-demo@1.0.0',
    workflow_type: 'NFL',
    workflow_type_version: 'DSL2',
    workflow_params: { sample_id: 'S1' },
    tags: { batch: '7' },
    workflow_engine_parameters: {},
    attachments: 0,
  }

  it('submits the params, the tags as strings and the profile', () => {
    expect(
      decideWesSubmission(pipeline, {
        ...base,
        workflow_engine: 'nextflow',
        workflow_engine_version: '24.10.0',
        workflow_engine_parameters: { profile: 'test' },
      }),
    ).toEqual({
      ok: true,
      changes: { params: { sample_id: 'S1' }, tags: ['batch=7'], profile: 'test' },
      events: [],
    })
  })

  it.each<[string, Partial<WesRunRequest>, string]>([
    ['attachments', { attachments: 1 }, 'workflow_attachment: '],
    ['another workflow type', { workflow_type: 'CWL' }, 'workflow_type: nf-demo@1.0.0 is a NFL workflow, not CWL'],
    ['an unsupported type version', { workflow_type_version: 'DSL1' }, 'workflow_type_version: NFL DSL1 is not supported; send one of DSL2'],
    ['another engine', { workflow_engine: 'cromwell' }, 'workflow_engine: nf-demo@1.0.0 runs on nextflow, not cromwell'],
    ['an engine version without the engine', { workflow_engine_version: '24.10.0' }, 'workflow_engine: required when workflow_engine_version'],
    [
      'another engine version',
      { workflow_engine: 'nextflow', workflow_engine_version: '23.04.0' },
      'workflow_engine_version: nf-demo@1.0.0 runs on nextflow 24.10.0',
    ],
    [
      'an engine parameter it does not pass on',
      { workflow_engine_parameters: { '-resume': 'true' } },
      'workflow_engine_parameters.-resume: not supported',
    ],
    ['a tag key with =', { tags: { 'a=b': 'c' } }, "tags: a key must be non-empty and without '='"],
    ['an empty tag key', { tags: { '': 'c' } }, "tags: a key must be non-empty and without '='"],
  ])('refuses %s with a 400 naming the field', (_, change, detail) => {
    const decision = decideWesSubmission(pipeline, { ...base, ...change })
    expect(decision.ok).toBe(false)
    if (!decision.ok) {
      expect(decision.refusal.kind).toBe('invalid')
      expect(decision.refusal).toMatchObject({ detail: expect.stringContaining(detail) })
    }
  })

  it('accepts a request only with the workflow type of its pipeline', () => {
    fc.assert(
      fc.property(fc.constantFrom('NFL', 'WDL', 'CWL', 'CONTAINER', 'nfl', ''), (type) => {
        expect(decideWesSubmission(pipeline, { ...base, workflow_type: type }).ok).toBe(type === 'NFL')
      }),
    )
  })
})

describe('wesTime()', () => {
  it('writes a time to the second, in UTC, as WES asks ("%Y-%m-%dT%H:%M:%SZ")', () => {
    expect(wesTime(new Date('2026-11-26T14:05:46.123Z'))).toBe('2026-11-26T14:05:46Z')
  })
})

import { afterAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../../lib/log.js'
import { createExecutionRequest, CloudWorkflowExecutions, type WorkflowExecutions } from '../../../lib/workflows.js'
import { INGESTION_STEPS } from '../../../domain/variants/ingestions.js'
import { WorkflowsIngestionRunner } from '../../../domain/variants/runner.js'
import type { OrchestratorDeps } from '../../../orchestrator/deps.js'
import { ingestionStep } from '../../../orchestrator/ingestion-step.js'
import { makeVariantWorld } from '../../support/variants.js'
import { rec, vcf } from '../../support/vcf.js'

/**
 * The cloud runner: one Cloud Workflows execution per ingestion (the createExecution request is the
 * boundary the test scripts: Cloud Workflows cannot be reached from here), and the ingestionStep
 * function that execution calls, driven step by step as infra/workflows/ingestion.yaml does.
 */
describe('ingestion under Cloud Workflows', async () => {
  const w = await makeVariantWorld()
  afterAll(() => w.close())
  const WORKFLOW = 'projects/p/locations/europe-west4/workflows/platform-ingestion'
  const started: Array<{ workflow: string; argument: Record<string, unknown> }> = []
  const workflows: WorkflowExecutions = {
    start: async (workflow, argument) => {
      started.push({ workflow, argument })
      return { name: `${workflow}/executions/exec-${started.length}` }
    },
  }
  const runner = new WorkflowsIngestionRunner({ ingestions: w.deps.ingestions, workflows, workflow: WORKFLOW, log: w.kernel.log })
  const deps = { ingestions: w.deps.ingestions, ingestion: w.ingestionDeps() } as unknown as OrchestratorDeps

  it('builds the createExecution request exactly: the argument as JSON, labels Cloud-safe, errors-only call log', async () => {
    expect(createExecutionRequest(WORKFLOW, { ingestion_id: 'i' }, { Order: 'ORD/1' })).toEqual({
      parent: WORKFLOW,
      execution: { argument: '{"ingestion_id":"i"}', callLogLevel: 'LOG_ERRORS_ONLY', labels: { order: 'ord-1' } },
    })
    const rpc = { createExecution: async () => ({ name: null }) }
    await expect(new CloudWorkflowExecutions(rpc).start(WORKFLOW, {})).rejects.toThrow(/without a name/)
  })

  it("starts one execution for a duplicated message, logged with the event's ids, and its steps build the cache", async () => {
    const t = await w.signedTrio()
    const ing = await w.request(t.order.id, await w.putTrio(t.names, { records: 40, seed: 9 }))
    const record = (await w.deps.ingestions.get(ing.id))!
    const lines: Array<Record<string, unknown>> = []
    const eventLog = createLogger('debug', { service: 'orchestrator' }, (line) => lines.push(JSON.parse(line))).with({ event_id: 'e-1' })
    await Promise.all([runner.start(record, eventLog), runner.start(record, eventLog)])
    await runner.start(record, eventLog)
    expect(lines).toEqual([expect.objectContaining({ message: 'ingestion: workflow execution started', ingestion_id: ing.id, event_id: 'e-1' })])
    expect(started.filter((s) => s.argument.ingestion_id === ing.id)).toEqual([
      { workflow: WORKFLOW, argument: { ingestion_id: ing.id, project_id: w.project.id } },
    ])
    const execution = (await w.deps.ingestions.get(ing.id))!.dispatch.execution!
    expect(execution).toMatch(/executions\/exec-/)

    // The workflow: each step until done, again while `more`, ending on `stop`.
    const answers: string[] = []
    for (const step of INGESTION_STEPS) {
      for (;;) {
        const res = await ingestionStep(deps, { ingestion_id: ing.id, project_id: w.project.id, step, holder: execution })
        expect(res.status).toBe(200)
        const body = res.body as { outcome: string; more: boolean; stop: boolean }
        answers.push(`${step}:${body.outcome}`)
        if (!body.more) break
      }
    }
    expect(answers).toEqual(INGESTION_STEPS.map((s) => `${s}:done`))
    expect((await w.vc('GET', `/orders/${t.order.id}/status`)).body.status).toBe('ready')
    // A retried call of a finished step answers done at once.
    const again = await ingestionStep(deps, { ingestion_id: ing.id, project_id: w.project.id, step: 'write_cache', holder: execution })
    expect(again.body).toMatchObject({ outcome: 'done', status: 'ready' })
  })

  it('answers a bad step request 400 and another project 404, which the workflow does not retry', async () => {
    expect((await ingestionStep(deps, { ingestion_id: 'x', step: 'nope' })).status).toBe(400)
    const missing = await ingestionStep(deps, {
      ingestion_id: '00000000-0000-4000-8000-000000000000',
      project_id: w.project.id,
      step: 'validate',
      holder: 'h',
    })
    expect(missing).toEqual({ status: 404, body: { detail: 'ingestion not found' } })
  })

  it('answers stop for a VCF no retry could read (a 1.2 MB ALT): the ingestion failed, naming the line, and the workflow ends', async () => {
    const t = await w.signedTrio()
    const huge = rec('chr1', 2000, '.', 'A', `A${'T'.repeat(1_200_000)}`, 50, 'PASS', '.', 'GT', '0/1', '0/0', '0/0')
    const ing = await w.request(t.order.id, await w.putVcf(vcf({ samples: [t.names.proband, t.names.mother, t.names.father], records: [huge] })))
    const res = await ingestionStep(deps, { ingestion_id: ing.id, project_id: w.project.id, step: 'validate', holder: 'exec-huge' })
    expect(res).toEqual({ status: 200, body: expect.objectContaining({ outcome: 'stop', status: 'failed', stop: true }) })
    expect((await w.deps.ingestions.get(ing.id))!).toMatchObject({
      status: 'failed',
      pending: false,
      error: { step: 'validate', line: expect.any(Number) },
    })
  })
})

import { describe, expect, it } from 'vitest'
import { auditChainKey, verifyAuditChain, type AuditEvent, type AuditHead } from '../../../lib/audit.js'
import { newId } from '../../../lib/ids.js'
import { API_PREFIX, createServiceApp, resourceApp } from '../../../lib/http.js'
import { testKernel } from '../../support/env.js'
import { call, makeWorld } from '../../support/world.js'

/** What a request must be answered within past the capacity of the service (docs/operating.md). */
const ANSWER_WITHIN_MS = 2_000

/** A service of the kernel's factory that handles one request at a time, with a route that holds each request until released. */
async function busyService() {
  const world = await makeWorld()
  const kernel = testKernel('overload-test', { MAX_CONCURRENT_REQUESTS: '1', MAX_QUEUED_REQUESTS: '0' })
  const deps = {
    ...kernel,
    db: world.deps.db,
    access: world.deps.access,
    tokens: world.deps.tokens,
    audit: world.deps.audit,
  }
  const app = createServiceApp({ name: 'busy', title: 'Busy service', description: 'overload', deps, projectScoped: false })
  const releases: Array<() => void> = []
  const routes = resourceApp()
  routes.get('/hold', async (c) => {
    await new Promise<void>((r) => releases.push(r))
    return c.json({ ok: true })
  })
  app.route(API_PREFIX, routes)
  /** Resolves once the held request reached its route (past authentication). */
  const held = async () => {
    while (!releases.length) await new Promise((r) => setTimeout(r, 5))
  }
  return { app, world, held, release: () => releases.splice(0).forEach((r) => r()) }
}

describe('a service at capacity', async () => {
  const { app, world, held, release } = await busyService()
  const token = world.owner.token

  it('answers 503 with Retry-After, the one error shape and its request id, before reading the credential, and still answers its health checks', async () => {
    const first = call(app, 'GET', '/api/v1/hold', { token })
    await held()
    const refused = await call(app, 'GET', '/api/v1/hold', { token: 'plat_pat_not-a-token' })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('x-request-id')).toBeTruthy()
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Object.keys(refused.body)).toEqual(['detail'])
    for (const path of ['/healthz', '/health']) {
      const health = await call(app, 'GET', path)
      expect(health.status).toBe(200)
      expect(health.body).toMatchObject({ status: 'ok', service: 'busy' })
    }
    release()
    expect((await first).status).toBe(200)
    // The slot is free again.
    const next = call(app, 'GET', '/api/v1/hold', { token })
    await held()
    release()
    expect((await next).status).toBe(200)
  })
})

describe('transactions that race for one chain head', () => {
  const kernel = testKernel('overload-test')
  const ctx = { actor: { type: 'user' as const, id: 'u1', email: 'a@example.org', auth_method: 'personal_token' } }

  it('all commit, in one unbroken chain, within the retry budget: the losers of the race run again after the head the winner wrote', async () => {
    // Events of one entity share its chain's head: each transaction reads it and writes it.
    const project_id = newId()
    const entity = { type: 'project', id: project_id }
    const t0 = performance.now()
    const events = await Promise.all(Array.from({ length: 6 }, () => kernel.audit.record(ctx, { project_id, entity, action: 'access.denied' })))
    expect(performance.now() - t0).toBeLessThan(ANSWER_WITHIN_MS)
    expect(events.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 6 }, (_, i) => i + 1))
    const chain = auditChainKey({ project_id, entity })
    const stored = (await kernel.db.col('audit_events').where('chain', '==', chain).get()).docs.map((d) => d.data() as AuditEvent)
    const head = (await kernel.db.col('audit_heads').doc(chain).get()).data() as AuditHead
    expect(verifyAuditChain(stored, kernel.audit.keys, head)).toEqual([])
  })
})

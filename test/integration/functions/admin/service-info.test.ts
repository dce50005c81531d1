import { afterAll, describe, expect, it } from 'vitest'
import { adminDeps } from '../../../../functions/admin/deps.js'
import { createAdminApp } from '../../../../functions/admin/service.js'
import { startLoginStack } from '../../../support/oidc.js'
import { testKernel } from '../../../support/env.js'
import { call } from '../../../support/world.js'

describe("admin: GET /service-info, where the platform's services are", async () => {
  const stack = await startLoginStack({
    PLATFORM_ENVIRONMENT: 'staging',
    PLATFORM_VERSION: '1.2.3',
    COMPUTE_PUBLIC_URL: 'https://lab.example/compute/',
    REPORTS_PUBLIC_URL: 'https://lab.example/reports',
  })
  afterAll(() => stack.stop())

  it('names every service, the identity provider and the environment to anyone, before a login, and may be cached', async () => {
    const res = await call(stack.app, 'GET', '/api/v1/service-info')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('public, max-age=300')
    expect(res.body).toEqual({
      environment: 'staging',
      version: '1.2.3',
      services: expect.objectContaining({ admin: stack.adminUrl, compute: 'https://lab.example/compute', reports: 'https://lab.example/reports' }),
      identity_provider: { issuer: stack.provider.issuer, cli_login_methods: ['browser', 'password'] },
    })
  })

  it('names no identity provider where login is not configured, and the Google Cloud project where the environment has no name', async () => {
    const app = createAdminApp(adminDeps(testKernel('admin', { GOOGLE_CLOUD_PROJECT: 'lab-prod', ADMIN_PUBLIC_URL: 'https://lab.example/admin' })))
    const res = await call(app, 'GET', '/api/v1/service-info')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      environment: 'lab-prod',
      version: null,
      services: { admin: 'https://lab.example/admin' },
      identity_provider: null,
    })
  })
})

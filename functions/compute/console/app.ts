import type { Context } from 'hono'
import { consolePages, consoleUrl, historyUrl, ownConsoleUrl, type ConsoleProject } from '../../../lib/console/index.js'
import type { ComputeDeps, ComputeEnv } from '../deps.js'
import type { Links } from './views.js'

/** The compute service's console (/console/...): runs, the pipeline catalogue, the launch form. Pages register on it in their own files. */
export const computeConsole = consolePages<ComputeDeps>()

/**
 * The addresses of the compute console's pages for one project (by its id, whichever way the path
 * named it), absolute under the service's public base; the clinical console's order pages.
 */
export function linksOf(c: Context<ComputeEnv>, project: ConsoleProject['project'], principal?: ConsoleProject['principal']): Links {
  const base = ownConsoleUrl(c, `/p/${project.id}`)
  const config = c.get('deps').config
  const clinical = consoleUrl(config, 'clinical', `/console/p/${project.id}/orders/`)
  return {
    runs: (query = {}) => {
      const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])))
      return `${base}/runs${q.size ? `?${q.toString()}` : ''}`
    },
    run: (id) => `${base}/runs/${id}`,
    cancel: (id) => `${base}/runs/${id}/cancel`,
    relaunch: (id) => `${base}/runs/${id}/relaunch`,
    log: (id, stream) => `${base}/runs/${id}/log${stream ? `?stream=${stream}` : ''}`,
    download: (id, path) => `${base}/runs/${id}/download?${new URLSearchParams({ path }).toString()}`,
    pipelines: () => `${base}/pipelines`,
    pipeline: (id) => `${base}/pipelines/${id}`,
    launch: (id) => `${base}/pipelines/${id}/launch`,
    ...(clinical ? { order: (id: string) => `${clinical}${encodeURIComponent(id)}` } : {}),
    history: (id) => (principal ? historyUrl(config, { principal, project }, 'run', id) : undefined),
  }
}

/** An Idempotency-Key as the API takes one, posted by the launch and relaunch forms. */
export const KEY_RE = /^[\x21-\x7e]{1,255}$/

/**
 * The console's project is the request's project for the code the API shares (actions.ts reads
 * `project` and `principal` from the context, as the API's middleware sets them).
 */
export function enter(c: Context<ComputeEnv>, s: ConsoleProject) {
  c.set('project', s.project)
  return { project: s.project, org: s.org }
}

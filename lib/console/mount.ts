import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { Config } from '../config.js'
import { Refused, refusalReason } from '../decision.js'
import { ApiError } from '../errors.js'
import { recordDenial, type AppEnv, type KernelDeps } from '../http.js'
import { pageHeaders, publicBase } from '../pages.js'
import { errorView, renderConsole } from './layout.js'
import { CONSOLE_JS } from './script.js'
import { seenOn } from './session.js'
import { CONSOLE_CSS } from './style.js'

/**
 * The console's security headers: the pages' policy (lib/pages.ts) with the console's one script
 * from the service itself (`script-src 'self'`: no inline script or style), and forms that may post
 * to any of the platform's services (the header's sign-out goes to the admin service) and the
 * identity provider. Pages are never cached; the two assets are.
 */
const consoleHeaders = (config: Config): MiddlewareHandler =>
  pageHeaders(config, { scripts: true, formsToEveryService: true, cached: (path) => path.includes('/console/assets/') })

const headersByConfig = new WeakMap<Config, MiddlewareHandler>()

/**
 * Answers of a console page that did not finish: a page stopped on purpose (`stopWith`: a login
 * redirect, a 403 page) as it is; a refusal of a store or decision (`Refused`, an `ApiError`) as a
 * page that says why with its status, a 403 with the access.denied event the API would record;
 * anything else a 500 page (and the error in the log).
 */
async function consoleError(err: Error, c: Context<AppEnv>): Promise<Response> {
  if (err instanceof HTTPException && err.res) return err.getResponse()
  const header = seenOn(c)
  if (err instanceof ApiError) {
    if (err instanceof Refused && err.status === 403 && err.on) await recordDenial(c, refusalReason(err.refusal), err.on)
    // A body over the limit is answered before any page runs (lib/http.ts); here it would be a form's, a 400 like any bad form.
    const status = err.status === 413 ? 400 : err.status
    return renderConsole(c, { ...header, ...errorView(status, err.detail) }, status)
  }
  if (err instanceof HTTPException && err.status < 500) return renderConsole(c, { ...header, ...errorView(400, err.message || 'bad request') }, 400)
  c.get('deps').log.error('unhandled error', { path: c.req.path, method: c.req.method, error: err })
  return renderConsole(
    c,
    { ...header, ...errorView(500, 'An internal error stopped this page: nothing more is known here; try again, or tell the platform team.') },
    500,
  )
}

/**
 * A service's console: a sub-app under /console with the console's headers, its stylesheet and
 * script (/console/assets/console.css and console.js) and its error pages. A service makes one and
 * lists it in its definition's `pages`; its handlers begin with `requireConsoleSession` or
 * `consoleProject`, call the same stores as the API with `auditContext(c)`, and answer with
 * `renderConsole` (or `redirectWithNotice` after a form).
 */
export function consolePages<D extends KernelDeps>() {
  const root = new Hono<AppEnv<D>>()
  // A service's `get('/')` is /console; the address typed with a trailing slash goes there too.
  root.get('/console/', (c) => c.redirect(`${publicBase(c)}/console`, 301))
  const app = root.basePath('/console')
  app.use('*', (c, next) => {
    const config = c.get('deps').config
    let headers = headersByConfig.get(config)
    if (!headers) headersByConfig.set(config, (headers = consoleHeaders(config)))
    return headers(c, next)
  })
  const asset = (body: string, type: string) => (c: Context) => c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=300' })
  app.get('/assets/console.css', asset(CONSOLE_CSS, 'text/css; charset=utf-8'))
  app.get('/assets/console.js', asset(CONSOLE_JS, 'text/javascript; charset=utf-8'))
  app.onError((err, c) => consoleError(err, c as unknown as Context<AppEnv>))
  return app
}

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Env, Hono } from 'hono'
import { secureHeaders } from 'hono/secure-headers'

/**
 * /docs (Swagger UI) and /redoc, with their assets served from the npm packages themselves, so the
 * pages work with no internet access. Addresses are relative, so they also work when a function is
 * served under a path prefix.
 */
const require = createRequire(import.meta.url)
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'))
const redocBundle = join(dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js')

const JS = 'text/javascript; charset=utf-8'
const readText = (file: string) => readFileSync(file, 'utf8')

/**
 * Redoc's side menu always fetches the Redocly logo from its CDN, which an offline page cannot
 * reach (and a clinical network should not be asked to). An empty SVG takes its place.
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg'
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/%3E"

// The initializer is an asset rather than an inline script so that the pages' CSP can forbid inline scripts.
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({ url: './openapi.json', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout', validatorUrl: null })\n`

const ASSETS: Record<string, { load: () => string | Buffer; type: string }> = {
  'swagger-ui.css': { load: () => readFileSync(join(swaggerDir, 'swagger-ui.css')), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { load: () => readFileSync(join(swaggerDir, 'swagger-ui-bundle.js')), type: JS },
  'swagger-ui-standalone-preset.js': { load: () => readFileSync(join(swaggerDir, 'swagger-ui-standalone-preset.js')), type: JS },
  'swagger-init.js': { load: () => SWAGGER_INIT, type: JS },
  'redoc.standalone.js': { load: () => readText(redocBundle).replaceAll(REDOC_CDN_LOGO, EMPTY_SVG), type: JS },
}
const cache = new Map<string, Buffer>()
const asset = (name: string) => {
  let body = cache.get(name)
  if (!body) {
    const loaded = ASSETS[name]!.load()
    body = typeof loaded === 'string' ? Buffer.from(loaded) : loaded
    cache.set(name, body)
  }
  return body
}

/**
 * Only this origin: a docs page can never call out to the internet, whatever a future version of
 * either bundle references, and no other site may frame it. Both UIs inject their styles at run
 * time, hence 'unsafe-inline' for styles.
 */
const docsHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    workerSrc: ["'self'", 'blob:'],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
})

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!)

export function mountDocs<E extends Env>(app: Hono<E>, title: string) {
  const t = escapeHtml(title)
  app.get('/docs-assets/:name', (c) => {
    const name = c.req.param('name')
    const a = ASSETS[name]
    if (!a) return c.json({ detail: 'asset not found' }, 404)
    return c.body(new Uint8Array(asset(name)), 200, { 'Content-Type': a.type, 'Cache-Control': 'public, max-age=86400' })
  })
  app.get('/docs', docsHeaders, (c) => {
    return c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${t} · API docs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="./docs-assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="./docs-assets/swagger-ui-bundle.js"></script>
<script src="./docs-assets/swagger-ui-standalone-preset.js"></script>
<script src="./docs-assets/swagger-init.js"></script>
</body></html>`)
  })
  app.get('/redoc', docsHeaders, (c) => {
    return c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${t} · API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="./openapi.json" disable-search="false"></redoc>
<script src="./docs-assets/redoc.standalone.js"></script>
</body></html>`)
  })
}

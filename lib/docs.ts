import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Hono } from 'hono'

/**
 * /docs (Swagger UI) and /redoc, with their assets served from the npm packages themselves, so the
 * pages work with no internet access. Addresses are relative, so they also work when a function is
 * served under a path prefix.
 */
const require = createRequire(import.meta.url)
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'))
const redocBundle = join(dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js')

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: join(swaggerDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(swaggerDir, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { file: join(swaggerDir, 'swagger-ui-standalone-preset.js'), type: 'text/javascript; charset=utf-8' },
  'redoc.standalone.js': { file: redocBundle, type: 'text/javascript; charset=utf-8' },
}
const cache = new Map<string, Buffer>()
const asset = (name: string) => {
  let body = cache.get(name)
  if (!body) {
    body = readFileSync(ASSETS[name]!.file)
    cache.set(name, body)
  }
  return body
}

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]!)

export function mountDocs(app: Hono<any>, title: string) {
  const t = escapeHtml(title)
  app.get('/docs-assets/:name', (c) => {
    const name = c.req.param('name')
    const a = ASSETS[name]
    if (!a) return c.json({ detail: 'asset not found' }, 404)
    return c.body(new Uint8Array(asset(name)), 200, { 'Content-Type': a.type, 'Cache-Control': 'public, max-age=86400' })
  })
  app.get('/docs', (c) =>
    c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${t} · API docs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="./docs-assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="./docs-assets/swagger-ui-bundle.js"></script>
<script src="./docs-assets/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: './openapi.json', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout', validatorUrl: null })</script>
</body></html>`),
  )
  app.get('/redoc', (c) =>
    c.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${t} · API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="./openapi.json" disable-search="false"></redoc>
<script src="./docs-assets/redoc.standalone.js"></script>
</body></html>`),
  )
}

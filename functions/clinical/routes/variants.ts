import { createRoute, z } from '@hono/zod-openapi'
import { badRequest, notFound } from '../../../lib/errors.js'
import { requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse } from '../../../lib/pagination.js'
import { parseRegion } from '../../../domain/variants/genome-order.js'
import type { ClinicalDeps } from '../deps.js'
import { CatalogueQuery, CatalogueVariant, VariantIdParam } from '../schemas.js'

/** /variants: the project's variant catalogue, read-only (ingestion is its only writer), with local observation counts. */
export const variants = resourceApp<ClinicalDeps>()

const read = requires('clinical.read')
const tags = ['variants']

/** A region (chr17:43044295-43125483), or a 400 naming the parameter. */
export function regionOf(text: string | undefined) {
  if (text === undefined) return undefined
  const region = parseRegion(text)
  if (!region || region.end >= 1e10) throw badRequest(`region: '${text}' is not a region such as chr17:43044295-43125483`)
  return region
}

variants.openapi(
  createRoute({
    operationId: 'listVariants',
    method: 'get',
    path: '/variants',
    tags,
    summary:
      "The project's catalogue: every distinct variant ingested, in genome order, with how many orders and samples it is seen in; filters region, gene",
    middleware: [read] as const,
    request: { query: PageQuery.extend(CatalogueQuery.shape) },
    responses: { 200: { ...json(z.array(CatalogueVariant)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { gene, region, ...page } = c.req.valid('query')
    const result = await c.get('deps').variants.catalogue.list(c.get('project').id, { gene, region: regionOf(region) }, page)
    return pageResponse(c, result)
  },
)

variants.openapi(
  createRoute({
    operationId: 'getVariant',
    method: 'get',
    path: '/variants/{id}',
    tags,
    summary: 'One variant of the catalogue, with its observation counts and the orders (and carrier samples) observing it',
    middleware: [read] as const,
    request: { params: VariantIdParam },
    responses: { 200: json(CatalogueVariant), ...commonErrors },
  }),
  async (c) => {
    const variant = await c.get('deps').variants.catalogue.get(c.get('project').id, c.req.valid('param').id)
    if (!variant) throw notFound('variant')
    return c.json(variant, 200)
  },
)

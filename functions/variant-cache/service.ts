import { defineService, serviceApp } from '../../lib/service.js'
import { variantConsole } from './console.js'
import { variantCacheDeps, type VariantCacheDeps } from './deps.js'
import { orders } from './routes/orders.js'
import { seedDemoSamplesheet } from './seed.js'

/**
 * The variant-cache service: each order's variants (built from one VCF by an ingestion), paged in
 * genome order with filters, one variant, the cache's status, and the ingestions that build it.
 */
export const variantCache = defineService<VariantCacheDeps>({
  name: 'variant_cache',
  title: 'Variant-cache service',
  description:
    "An order's variants, built from one VCF (a run's output, or a VCF in the project bucket) by an ingestion: paged in genome order with filters (gene, region, consequence, min_qual, PASS, zygosity per role), each with every order sample's call under its role; the cache's status; the ingestions. Every request needs X-Project-ID.",
  port: 8106,
  projectScoped: true,
  collections: ['variant_ingestions', 'variant_caches', 'cache_variants', 'variant_catalogue'],
  tags: [
    {
      name: 'variants',
      description:
        "An order's variant cache: its variants in genome order with every sample's call under its role, one variant, the status of the cache",
    },
    { name: 'ingestions', description: "What builds an order's cache from a VCF: queued → building → ready | failed, in steps that survive a crash" },
  ],
  deps: (kernel) => variantCacheDeps(kernel),
  routes: [orders],
  pages: [variantConsole],
  seed: seedDemoSamplesheet,
})

export const createVariantCacheApp = (deps: VariantCacheDeps) => serviceApp(variantCache.definition, deps)

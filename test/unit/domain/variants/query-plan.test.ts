import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  cacheQueryPlan,
  FILTER_ROLES,
  MAX_DISJUNCTIONS,
  ROLE_GROUPS,
  type CacheFilters,
  type CacheQueryPlan,
  type CacheVariantDoc,
  type FilterRole,
} from '../../../../domain/variants/cache.js'
import { genomeOrderKey, parseGenomeOrderKey } from '../../../../domain/variants/genome-order.js'
import { ZYGOSITIES, type Zygosity } from '../../../../domain/variants/records.js'

/** The fields of a cache document the filters read. */
type Filtered = Pick<CacheVariantDoc, 'genes' | 'consequence' | 'pass' | 'qual' | 'genome_order'> & { [zyg: `zyg_${string}`]: Zygosity | undefined }

const CONSEQUENCES = ['missense_variant', 'stop_gained', 'synonymous_variant', 'intron_variant']
const zygosityOrAbsent = fc.option(fc.constantFrom(...ZYGOSITIES), { nil: undefined })
const doc: fc.Arbitrary<Filtered> = fc
  .record({
    genes: fc.subarray(['BRCA1', 'SCN2A', 'TP53']),
    consequence: fc.option(fc.constantFrom(...CONSEQUENCES), { nil: null }),
    pass: fc.boolean(),
    qual: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
    chrom: fc.constantFrom('2', '17'),
    pos: fc.integer({ min: 1, max: 20 }),
    zyg: fc.tuple(...FILTER_ROLES.map(() => zygosityOrAbsent)),
  })
  .map(
    (d) =>
      ({
        genes: d.genes,
        consequence: d.consequence,
        pass: d.pass,
        qual: d.qual,
        genome_order: genomeOrderKey({ chrom: d.chrom, pos: d.pos, id: 'v' }),
        ...Object.fromEntries(FILTER_ROLES.map((role, i) => [`zyg_${role}`, d.zyg[i]])),
      }) as Filtered,
  )

const zygosities = fc.subarray([...ZYGOSITIES], { minLength: 1 })
const filters: fc.Arbitrary<CacheFilters> = fc
  .record(
    {
      gene: fc.constantFrom('BRCA1', 'TP53'),
      region: fc.record({ chrom: fc.constant('17'), start: fc.integer({ min: 1, max: 10 }), end: fc.integer({ min: 10, max: 20 }) }),
      consequence: fc.subarray(CONSEQUENCES, { minLength: 1 }),
      min_qual: fc.integer({ min: 0, max: 60 }),
      filter: fc.constant('PASS' as const),
      zygosity: fc.record(Object.fromEntries(FILTER_ROLES.map((role) => [role, zygosities])) as Record<FilterRole, fc.Arbitrary<Zygosity[]>>, {
        requiredKeys: [],
      }),
    },
    { requiredKeys: [] },
  )
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as CacheFilters)

/** What the filters mean (the API's description), read directly. */
function means(f: CacheFilters, d: Filtered): boolean {
  if (f.gene !== undefined && !d.genes.includes(f.gene)) return false
  if (f.region) {
    const { chrom, pos } = parseGenomeOrderKey(d.genome_order)
    if (chrom !== f.region.chrom || pos < f.region.start || pos > f.region.end) return false
  }
  if (f.consequence?.length && !f.consequence.includes(d.consequence!)) return false
  if (f.min_qual !== undefined && (d.qual === null || d.qual < f.min_qual)) return false
  if (f.filter === 'PASS' && !d.pass) return false
  return FILTER_ROLES.every((role) => !f.zygosity?.[role]?.length || f.zygosity[role]!.includes(d[`zyg_${role}`]!))
}

/** What the plan selects: the query (past the build), its range, and the conditions checked on each document read. */
function selects(plan: CacheQueryPlan, d: Filtered): boolean {
  const get = (field: string) => (d as unknown as Record<string, unknown>)[field]
  return (
    plan.equal.slice(1).every(([field, values]) => values.includes(get(field))) &&
    (!plan.contains || (get(plan.contains[0]) as string[]).includes(plan.contains[1])) &&
    (!plan.range || (d.genome_order >= plan.range.start && d.genome_order < plan.range.end)) &&
    plan.post.every((p) => p(d as CacheVariantDoc))
  )
}

describe('cacheQueryPlan', () => {
  it('selects exactly the variants the filters mean, the query and the checks in memory together', () => {
    fc.assert(
      fc.property(filters, fc.array(doc, { maxLength: 40 }), (f, docs) => {
        const plan = cacheQueryPlan('b', f)
        expect(docs.filter((d) => selects(plan, d))).toEqual(docs.filter((d) => means(f, d)))
      }),
      { numRuns: 500 },
    )
  })

  it('never asks Firestore for more alternatives than it allows, nor zygosities of two role groups at once', () => {
    fc.assert(
      fc.property(filters, (f) => {
        const plan = cacheQueryPlan('b', f)
        expect(plan.equal[0]).toEqual(['build_id', ['b']])
        expect(plan.equal.reduce((n, [, values]) => n * values.length, 1)).toBeLessThanOrEqual(MAX_DISJUNCTIONS)
        const roles = plan.equal.flatMap(([field]) => (field.startsWith('zyg_') ? [field.slice(4) as FilterRole] : []))
        expect(ROLE_GROUPS.some((group) => roles.every((role) => group.includes(role)))).toBe(true)
        if (f.gene) expect(plan.equal).toHaveLength(1)
      }),
    )
  })

  it('groups every role that has a zygosity filter exactly once', () => {
    expect(ROLE_GROUPS.flat().sort()).toEqual([...FILTER_ROLES].sort())
  })

  it.each<[string, CacheFilters, string[], number]>([
    [
      'a de novo call in a trio',
      { zygosity: { proband: ['het'], mother: ['hom_ref'], father: ['hom_ref'] } },
      ['zyg_proband', 'zyg_mother', 'zyg_father'],
      0,
    ],
    [
      'a consequence in a tumour',
      { consequence: ['missense_variant'], zygosity: { tumor: ['het'], normal: ['hom_ref'] } },
      ['consequence', 'zyg_tumor', 'zyg_normal'],
      0,
    ],
    ['a trio beside a tumour', { zygosity: { proband: ['het'], tumor: ['het'] } }, ['zyg_proband'], 1],
    ['PASS and a quality', { filter: 'PASS', min_qual: 30 }, [], 2],
    ['a gene with the rest', { gene: 'SCN2A', consequence: ['missense_variant'], zygosity: { proband: ['het'] } }, [], 2],
    [
      'lists of 36 alternatives',
      { consequence: ['a', 'b', 'c', 'd'], zygosity: { proband: ['het', 'hom_alt', 'hemi'], mother: ['het', 'hom_ref', 'no_call'] } },
      ['zyg_proband', 'zyg_mother'],
      1,
    ],
  ])('for %s, queries %j and checks %d filters on the documents', (_, f, queried, checked) => {
    const plan = cacheQueryPlan('b', f)
    expect(plan.equal.slice(1).map(([field]) => field)).toEqual(queried)
    expect(plan.post).toHaveLength(checked)
  })
})

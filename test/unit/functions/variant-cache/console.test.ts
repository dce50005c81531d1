import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FILTER_ROLES, parseZygosityFilter } from '../../../../domain/variants/cache.js'
import { ZYGOSITIES } from '../../../../domain/variants/records.js'
import { zygosityParam } from '../../../../functions/variant-cache/console.js'

describe("the variants page's zygosity selects as the API's zygosity filter", () => {
  it.each([
    [{}, undefined],
    [{ zyg_proband: '' }, undefined],
    [{ zyg_proband: '', zyg_mother: '', zyg_father: '', zyg_tumor: '', zyg_normal: '' }, undefined],
    [{ zyg_proband: 'alt', zyg_mother: 'hom_ref', zyg_father: 'hom_ref' }, 'proband:alt,mother:hom_ref,father:hom_ref'],
    [{ zyg_father: 'hemi', zyg_other: 'het' }, 'father:hemi'],
  ])('%j is %s', (query, expected) => {
    expect(zygosityParam(query)).toBe(expected)
  })

  it('says per role what the selects say, in a form the API reads back', () => {
    const choice = fc.constantFrom('', 'alt', ...ZYGOSITIES)
    fc.assert(
      fc.property(fc.record(Object.fromEntries(FILTER_ROLES.map((r) => [`zyg_${r}`, choice]))), (query) => {
        const param = zygosityParam(query)
        const chosen = FILTER_ROLES.filter((r) => query[`zyg_${r}`])
        if (!chosen.length) {
          // Not returned: fast-check takes a property's false as its failure, and a matcher's value is not its verdict.
          expect(param).toBeUndefined()
          return
        }
        const parsed = parseZygosityFilter(param!)
        expect(Object.keys(parsed).sort()).toEqual([...chosen].sort())
        for (const role of chosen) {
          const value = query[`zyg_${role}`]!
          if (value !== 'alt') expect(parsed[role]).toEqual([value])
        }
      }),
    )
  })
})

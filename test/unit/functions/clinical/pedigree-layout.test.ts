import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { layoutPedigree, SYMBOL, type PedigreeMember } from '../../../../functions/clinical/console/pedigree-layout.js'

const person = (id: string, sex: PedigreeMember['sex'], parents: { mother?: string; father?: string } = {}): PedigreeMember => ({
  id,
  external_id: id.toUpperCase(),
  sex,
  affected_status: 'unknown',
  ...(parents.mother ? { mother_id: parents.mother } : {}),
  ...(parents.father ? { father_id: parents.father } : {}),
})

const rowOf = (layout: ReturnType<typeof layoutPedigree>) => new Map(layout.placed.map((p) => [p.member.id, p]))

describe('the pedigree layout', () => {
  it.each([
    {
      name: 'a trio: the parents side by side above, father left, the child below',
      members: [person('kid', 'female', { mother: 'mum', father: 'dad' }), person('mum', 'female'), person('dad', 'male')],
      rows: { dad: 0, mum: 0, kid: 1 },
      leftOf: [['dad', 'mum']],
    },
    {
      name: 'three generations: a married-in father is drawn in his partner’s row, beside her',
      members: [
        person('gma', 'female'),
        person('gpa', 'male'),
        person('mum', 'female', { mother: 'gma', father: 'gpa' }),
        person('dad', 'male'),
        person('kid', 'male', { mother: 'mum', father: 'dad' }),
      ],
      rows: { gpa: 0, gma: 0, mum: 1, dad: 1, kid: 2 },
      leftOf: [
        ['gpa', 'gma'],
        ['dad', 'mum'],
      ],
    },
    {
      name: 'a single subject with no relatives',
      members: [person('solo', 'unknown')],
      rows: { solo: 0 },
      leftOf: [],
    },
  ])('$name', ({ members, rows, leftOf }) => {
    const layout = layoutPedigree(members)
    const at = rowOf(layout)
    for (const [id, g] of Object.entries(rows)) expect(at.get(id)?.generation, id).toBe(g)
    for (const [a, b] of leftOf) {
      expect(at.get(a!)!.x).toBeLessThan(at.get(b!)!.x)
      expect(Math.abs(at.get(a!)!.x - at.get(b!)!.x)).toBeLessThanOrEqual(100)
    }
  })

  it("draws a trio's child centred under its parents", () => {
    const at = rowOf(layoutPedigree([person('kid', 'female', { mother: 'mum', father: 'dad' }), person('mum', 'female'), person('dad', 'male')]))
    expect(at.get('kid')!.x).toBe((at.get('mum')!.x + at.get('dad')!.x) / 2)
  })

  it('draws a parent outside the family as no line at all (only the members given are drawn)', () => {
    const layout = layoutPedigree([person('kid', 'male', { mother: 'elsewhere' })])
    expect(layout.descents).toEqual([])
    expect(layout.placed).toHaveLength(1)
  })

  /** Families as the pedigree rules allow them: each member's parents come earlier in the list, mothers not male, fathers not female. */
  const families = fc
    .array(
      fc.record({
        sex: fc.constantFrom('female', 'male', 'unknown', 'other'),
        mother: fc.nat(),
        father: fc.nat(),
        hasM: fc.boolean(),
        hasF: fc.boolean(),
      }),
      {
        minLength: 1,
        maxLength: 12,
      },
    )
    .map((rows) =>
      rows.map((r, i): PedigreeMember => {
        const earlier = rows.slice(0, i).map((_, j) => j)
        const mothers = earlier.filter((j) => rows[j]!.sex !== 'male')
        const fathers = earlier.filter((j) => rows[j]!.sex !== 'female')
        const mother = r.hasM && mothers.length ? mothers[r.mother % mothers.length] : undefined
        const father = r.hasF && fathers.length ? fathers.filter((f) => f !== mother)[r.father % Math.max(1, fathers.length)] : undefined
        return person(`m${i}`, r.sex, {
          mother: mother === undefined ? undefined : `m${mother}`,
          father: father === undefined ? undefined : `m${father}`,
        })
      }),
    )

  it('draws every member exactly once, each below its parents, no two symbols overlapping, all inside the drawing', () => {
    fc.assert(
      fc.property(families, (members) => {
        const layout = layoutPedigree(members)
        expect(layout.placed.map((p) => p.member.id).sort()).toEqual(members.map((m) => m.id).sort())
        const at = rowOf(layout)
        for (const d of layout.descents) for (const p of d.parents) expect(at.get(p)!.y).toBeLessThan(at.get(d.child)!.y)
        for (const a of layout.placed) {
          expect(a.x - SYMBOL / 2).toBeGreaterThanOrEqual(0)
          expect(a.x + SYMBOL / 2).toBeLessThanOrEqual(layout.width)
          expect(a.y + SYMBOL / 2).toBeLessThanOrEqual(layout.height)
          for (const b of layout.placed) if (a !== b && a.y === b.y) expect(Math.abs(a.x - b.x)).toBeGreaterThanOrEqual(SYMBOL)
        }
      }),
    )
  })
})

import { describe, expect, it } from 'vitest'
import {
  ancestorsOf,
  familyProblems,
  hpoProblems,
  parentProblems,
  sexChangeProblems,
  type PedigreeNode,
  type RoleEntry,
} from '../../../../domain/clinical/pedigree.js'
import type { SampleRole, Sex } from '../../../../domain/clinical/model.js'

const node = (id: string, sex: Sex, mother_id?: string, father_id?: string): PedigreeNode => ({ id, sex, mother_id, father_id })
// grandma → mum → kid; grandpa → mum; dad → kid
const family = new Map(
  [
    node('grandma', 'female'),
    node('grandpa', 'male'),
    node('mum', 'female', 'grandma', 'grandpa'),
    node('dad', 'male'),
    node('kid', 'unknown', 'mum', 'dad'),
  ].map((n) => [n.id, n]),
)

describe('pedigree rules', () => {
  it('finds every ancestor through mother and father links', () => {
    expect([...ancestorsOf('kid', family)].sort()).toEqual(['dad', 'grandma', 'grandpa', 'mum'])
    expect(ancestorsOf('grandma', family).size).toBe(0)
  })

  it.each<[string, string | undefined, 'mother' | 'father', string | undefined, string | undefined]>([
    ['a female mother', 'kid2', 'mother', 'mum', undefined],
    ['a mother of unknown sex', 'kid2', 'mother', 'kid', undefined],
    ['a male mother', 'kid2', 'mother', 'dad', 'is male and cannot be a mother'],
    ['a female father', 'kid2', 'father', 'mum', 'is female and cannot be a father'],
    ['a missing parent', 'kid2', 'father', 'nobody', 'no such subject'],
    ['the subject itself', 'mum', 'mother', 'mum', 'its own mother'],
    ['a child as parent', 'mum', 'mother', 'kid', 'descends from this subject'],
    ['a grandchild as parent', 'grandpa', 'father', 'kid', 'descends from this subject'],
    ['a parent for a new subject', undefined, 'father', 'dad', undefined],
  ])('%s', (_, subject, role, parent, problem) => {
    const problems = parentProblems(subject, role, parent ? family.get(parent) : undefined, family)
    if (problem) expect(problems.join()).toContain(problem)
    else expect(problems).toEqual([])
    if (problem) expect(problems[0]).toMatch(new RegExp(`^${role}_id: `))
  })

  it('refuses a sex change that contradicts the children it is a parent of', () => {
    expect(sexChangeProblems('male', ['K1'], [])).toEqual(['sex: the subject is the mother of K1 and cannot be male'])
    expect(sexChangeProblems('female', [], ['K2'])).toEqual(['sex: the subject is the father of K2 and cannot be female'])
    expect(sexChangeProblems('unknown', ['K1'], ['K2'])).toEqual([])
  })

  it('checks HPO term ids for form, naming each bad entry', () => {
    expect(hpoProblems(['HP:0001250', 'HP:0000001'])).toEqual([])
    expect(hpoProblems(['HP:001250', 'hp:0001250', 'HP:00012500', 'OMIM:123'])).toHaveLength(4)
    expect(hpoProblems(['HP:0001250', 'x'])[0]).toMatch(/^phenotypes\.1: /)
  })
})

describe('family roles at signing', () => {
  const e = (sample: string, role: SampleRole, subject: PedigreeNode): RoleEntry => ({ sample, role, subject })
  const kid = node('kid', 'male', 'mum', 'dad')
  const trio = [e('S1', 'proband', kid), e('S2', 'mother', node('mum', 'female')), e('S3', 'father', node('dad', 'male'))]

  it.each<[string, RoleEntry[], string | undefined]>([
    ['a trio', trio, undefined],
    ['a single proband', [trio[0]!], undefined],
    [
      'a quad with a sibling and a relative',
      [...trio, e('S4', 'sibling', node('sib', 'female', 'mum', 'dad')), e('S5', 'relative', node('aunt', 'female'))],
      undefined,
    ],
    ['no samples', [], 'the order has no samples'],
    ['no proband', trio.slice(1), 'exactly one proband (found 0)'],
    ['two probands', [...trio, e('S4', 'proband', node('twin', 'male'))], 'exactly one proband (found 2)'],
    ['two mothers', [...trio, e('S4', 'mother', node('mum', 'female'))], 'at most one mother (found 2: S2, S4)'],
    ['a male mother', [trio[0]!, e('S2', 'mother', node('mum', 'male'))], 'S2 is the mother but its subject is male'],
    ['a female father', [trio[0]!, e('S3', 'father', node('dad', 'female'))], 'S3 is the father but its subject is female'],
    [
      "a mother who is not the proband's recorded mother",
      [trio[0]!, e('S2', 'mother', node('stranger', 'female'))],
      "the proband's recorded mother is subject mum",
    ],
    ["the proband's own sample as a parent", [trio[0]!, e('S9', 'father', node('kid', 'male'))], "belongs to the proband's subject"],
    ['a tumor/normal pair', [e('T', 'tumor', node('p', 'female')), e('N', 'normal', node('p', 'female'))], undefined],
    ['tumor and normal of two people', [e('T', 'tumor', node('p', 'female')), e('N', 'normal', node('q', 'female'))], 'must come from one subject'],
    ['family and somatic roles mixed', [trio[0]!, e('T', 'tumor', kid)], 'cannot be mixed'],
  ])('%s', (_, entries, problem) => {
    const problems = familyProblems(entries)
    if (problem) expect(problems.join('; ')).toContain(problem)
    else expect(problems).toEqual([])
  })
})

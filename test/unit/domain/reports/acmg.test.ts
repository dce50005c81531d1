import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ACMG_CLASSIFICATIONS,
  ACMG_CRITERIA,
  classificationDisagreement,
  combineCriteria,
  parseCriteria,
  parseCriterion,
  type AppliedCriterion,
} from '../../../../domain/reports/acmg.js'

const applied = (...codes: string[]): AppliedCriterion[] => {
  const parsed = parseCriteria(codes)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.value
}

describe('the ACMG/AMP 2015 criteria', () => {
  it('are the 28 of Richards et al. 2015', () => {
    expect([...ACMG_CRITERIA.keys()]).toEqual([
      'PVS1',
      ...['PS1', 'PS2', 'PS3', 'PS4'],
      ...['PM1', 'PM2', 'PM3', 'PM4', 'PM5', 'PM6'],
      ...['PP1', 'PP2', 'PP3', 'PP4', 'PP5'],
      'BA1',
      ...['BS1', 'BS2', 'BS3', 'BS4'],
      ...['BP1', 'BP2', 'BP3', 'BP4', 'BP5', 'BP6', 'BP7'],
    ])
  })

  it.each([
    ['PVS1', 'PVS1', 'VeryStrong'],
    ['pm2', 'PM2', 'Moderate'],
    ['PM2_Supporting', 'PM2_Supporting', 'Supporting'],
    ['pvs1_strong', 'PVS1_Strong', 'Strong'],
    ['PP3_Moderate', 'PP3_Moderate', 'Moderate'],
    ['PS4_VeryStrong', 'PS4_VeryStrong', 'VeryStrong'],
    ['BP4_Strong', 'BP4_Strong', 'Strong'],
    ['BS1_Supporting', 'BS1_Supporting', 'Supporting'],
  ])('reads %s as %s at %s strength', (text, code, strength) => {
    expect(parseCriterion(text)).toMatchObject({ ok: true, value: { code, strength } })
  })

  it.each([
    ['PM7', 'not an ACMG/AMP 2015 criterion'],
    ['PX1', 'not an ACMG/AMP 2015 criterion'],
    ['PM2_', 'not an ACMG/AMP 2015 criterion'],
    ['PM2_Moderate', "Moderate is PM2's own strength"],
    ['PVS1_VeryStrong', "VeryStrong is PVS1's own strength"],
    ['BA1_Strong', 'stands alone'],
    ['BS2_Moderate', 'takes the strength modifiers _Strong, _Supporting'],
    ['PM2_Weak', 'takes the strength modifiers'],
  ])('refuses %s (%s)', (text, reason) => {
    const parsed = parseCriterion(text)
    expect(parsed.ok).toBe(false)
    expect(!parsed.ok && parsed.reason).toContain(reason)
  })

  it('refuses a criterion applied twice, whatever its strength, naming both items', () => {
    expect(parseCriteria(['PS2', 'PM2', 'pm2_supporting'])).toEqual({
      ok: false,
      problems: [{ index: 2, reason: 'PM2 is already applied (item 1)' }],
    })
  })
})

describe('combining criteria (Richards et al. 2015, Table 5)', () => {
  it.each([
    // Pathogenic
    [['PVS1', 'PS1'], 'pathogenic', '(i)'],
    [['PVS1', 'PM1', 'PM2'], 'pathogenic', '(i)'],
    [['PVS1', 'PM2', 'PP3'], 'pathogenic', '(i)'],
    [['PVS1', 'PP3', 'PP4'], 'pathogenic', '(i)'],
    [['PS1', 'PS2'], 'pathogenic', '(ii)'],
    [['PS2', 'PM1', 'PM2', 'PM4'], 'pathogenic', '(iii)'],
    [['PS2', 'PM1', 'PM2', 'PP1', 'PP3'], 'pathogenic', '(iii)'],
    [['PS2', 'PM2', 'PP1', 'PP2', 'PP3', 'PP4'], 'pathogenic', '(iii)'],
    [['PVS1', 'PS4_VeryStrong'], 'pathogenic', '≥2 very strong'],
    // Likely pathogenic
    [['PVS1', 'PM2'], 'likely_pathogenic', '(i)'],
    [['PVS1', 'PM2_Supporting'], 'likely_pathogenic', 'ClinGen SVI'],
    [['PS2', 'PM2'], 'likely_pathogenic', '(ii)'],
    [['PS3', 'PM1', 'PM2'], 'likely_pathogenic', '(ii)'],
    [['PS2', 'PM2_Supporting', 'PP3'], 'likely_pathogenic', '(iii)'],
    [['PM1', 'PM2', 'PM5'], 'likely_pathogenic', '(iv)'],
    [['PM1', 'PM2', 'PP2', 'PP3'], 'likely_pathogenic', '(v)'],
    [['PM2', 'PP1', 'PP2', 'PP3', 'PP4'], 'likely_pathogenic', '(vi)'],
    // A strong criterion applied at moderate strength counts as moderate.
    [['PS3_Moderate', 'PM1', 'PM2'], 'likely_pathogenic', '(iv)'],
    // Benign and likely benign
    [['BA1'], 'benign', 'stand-alone'],
    [['BS1', 'BS2'], 'benign', '(ii)'],
    [['BS1', 'BP4'], 'likely_benign', '(i)'],
    [['BP4', 'BP6'], 'likely_benign', '(ii)'],
    [['BP4_Strong', 'BS1'], 'benign', '(ii)'],
    // Uncertain
    [[], 'uncertain_significance', '(i)'],
    [['PM2', 'PP3'], 'uncertain_significance', '(i)'],
    [['PVS1'], 'uncertain_significance', '(i)'],
    [['PS2', 'PM2', 'BS1', 'BP4'], 'uncertain_significance', 'contradictory'],
  ])('%j is %s %s', (codes, classification, rule) => {
    const combined = combineCriteria(applied(...codes))
    expect(combined.classification).toBe(classification)
    expect(combined.rule).toContain(rule)
  })
})

describe('a classification that disagrees with its criteria (what a signer is shown before signing)', () => {
  it.each([
    ['pathogenic', ['PS2', 'PM2_Supporting', 'PP3'], 'likely_pathogenic'],
    ['benign', ['PVS1', 'PS2'], 'pathogenic'],
    ['likely_pathogenic', ['BA1'], 'benign'],
    ['pathogenic', ['PM2'], 'uncertain_significance'],
  ] as const)('%s with %j is told its criteria combine to %s', (classification, criteria, suggested) => {
    expect(classificationDisagreement(classification, criteria)?.classification).toBe(suggested)
  })

  it.each([
    ['agrees', 'likely_pathogenic', ['PS2', 'PM2_Supporting', 'PP3']],
    ['no criterion is applied', 'pathogenic', []],
    ['the variant is not classified', null, ['PVS1', 'PS2']],
    ['a stored criterion no longer reads', 'pathogenic', ['PM7']],
  ] as const)('says nothing when %s', (_, classification, criteria) => {
    expect(classificationDisagreement(classification, criteria)).toBeUndefined()
  })

  it("disagrees exactly when the classification is not what the criteria combine to (the API's criteria_suggest)", () => {
    const codes = [...ACMG_CRITERIA.keys()]
    fc.assert(
      fc.property(
        fc.constantFrom(...ACMG_CLASSIFICATIONS),
        fc.uniqueArray(fc.constantFrom(...codes), { minLength: 1, maxLength: 8 }),
        (cls, criteria) => {
          const combined = combineCriteria(applied(...criteria))
          const told = classificationDisagreement(cls, criteria)
          expect(told === undefined).toBe(combined.classification === cls)
          if (told) expect(told).toEqual(combined)
        },
      ),
    )
  })
})

/**
 * The ACMG/AMP 2015 variant classification (Richards et al., Genet Med 2015;17:405–424): its five
 * classes, its 28 evidence criteria with their default strengths, and its rules for combining
 * criteria (Table 5). A criterion may carry a strength modifier as ClinGen's Sequence Variant
 * Interpretation working group writes them (`PM2_Supporting`, `PVS1_Strong`, `PP3_Moderate`,
 * `BP4_Strong`): a pathogenic criterion may be applied at any strength (`_VeryStrong`, `_Strong`,
 * `_Moderate`, `_Supporting`), a benign one at strong or supporting; BA1 stands alone. A modifier
 * that names the criterion's own strength is refused, as is one criterion applied twice.
 */
export const ACMG_CLASSIFICATIONS = ['pathogenic', 'likely_pathogenic', 'uncertain_significance', 'likely_benign', 'benign'] as const
export type AcmgClassification = (typeof ACMG_CLASSIFICATIONS)[number]

export const STRENGTHS = ['VeryStrong', 'Strong', 'Moderate', 'Supporting', 'StandAlone'] as const
export type Strength = (typeof STRENGTHS)[number]
export type Direction = 'pathogenic' | 'benign'

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`)

type CriterionDefinition = { direction: Direction; strength: Strength }
const group = (prefix: string, n: number, direction: Direction, strength: Strength): Array<[string, CriterionDefinition]> =>
  range(prefix, n).map((c) => [c, { direction, strength }])

/** The 28 criteria of ACMG/AMP 2015, each with its direction and default strength. */
export const ACMG_CRITERIA: ReadonlyMap<string, CriterionDefinition> = new Map([
  ...group('PVS', 1, 'pathogenic', 'VeryStrong'),
  ...group('PS', 4, 'pathogenic', 'Strong'),
  ...group('PM', 6, 'pathogenic', 'Moderate'),
  ...group('PP', 5, 'pathogenic', 'Supporting'),
  ...group('BA', 1, 'benign', 'StandAlone'),
  ...group('BS', 4, 'benign', 'Strong'),
  ...group('BP', 7, 'benign', 'Supporting'),
])

const MODIFIERS: Record<Direction, readonly Strength[]> = {
  pathogenic: ['VeryStrong', 'Strong', 'Moderate', 'Supporting'],
  benign: ['Strong', 'Supporting'],
}

export interface AppliedCriterion {
  /** As written canonically: `PM2`, `PM2_Supporting`. */
  code: string
  criterion: string
  direction: Direction
  strength: Strength
}

export type ParsedCriterion = { ok: true; value: AppliedCriterion } | { ok: false; reason: string }

/** Reads one criterion, case-insensitively (`pm2_supporting` is `PM2_Supporting`). */
export function parseCriterion(text: string): ParsedCriterion {
  const m = /^([A-Za-z]{2,3}\d)(?:_([A-Za-z]+))?$/.exec(text.trim())
  const criterion = m?.[1]?.toUpperCase()
  const known = criterion ? ACMG_CRITERIA.get(criterion) : undefined
  if (!m || !criterion || !known) {
    return { ok: false, reason: `'${text.slice(0, 40)}' is not an ACMG/AMP 2015 criterion (PVS1, PS1–PS4, PM1–PM6, PP1–PP5, BA1, BS1–BS4, BP1–BP7)` }
  }
  if (!m[2]) return { ok: true, value: { code: criterion, criterion, ...known } }
  const modifier = STRENGTHS.find((s) => s.toLowerCase() === m[2]!.toLowerCase())
  const allowed = known.strength === 'StandAlone' ? [] : MODIFIERS[known.direction]
  if (!modifier || !allowed.includes(modifier)) {
    return {
      ok: false,
      reason: allowed.length
        ? `'${text.slice(0, 40)}': ${criterion} takes the strength modifiers ${allowed.map((s) => `_${s}`).join(', ')}`
        : `'${text.slice(0, 40)}': ${criterion} stands alone and takes no strength modifier`,
    }
  }
  if (modifier === known.strength)
    return { ok: false, reason: `'${text.slice(0, 40)}': ${modifier} is ${criterion}'s own strength; write ${criterion}` }
  return { ok: true, value: { code: `${criterion}_${modifier}`, criterion, direction: known.direction, strength: modifier } }
}

/** Reads a list of criteria: each known, each criterion once. The problems name the list positions. */
export function parseCriteria(
  list: readonly string[],
): { ok: true; value: AppliedCriterion[] } | { ok: false; problems: Array<{ index: number; reason: string }> } {
  const problems: Array<{ index: number; reason: string }> = []
  const value: AppliedCriterion[] = []
  const seen = new Map<string, number>()
  list.forEach((text, index) => {
    const parsed = parseCriterion(text)
    if (!parsed.ok) return void problems.push({ index, reason: parsed.reason })
    const first = seen.get(parsed.value.criterion)
    if (first !== undefined) return void problems.push({ index, reason: `${parsed.value.criterion} is already applied (item ${first})` })
    seen.set(parsed.value.criterion, index)
    value.push(parsed.value)
  })
  return problems.length ? { ok: false, problems } : { ok: true, value }
}

export interface CombinedClassification {
  classification: AcmgClassification
  /** The rule of Table 5 that gave it, e.g. `pathogenic (ii): ≥2 strong`. */
  rule: string
}

/**
 * The classification the criteria support by the combining rules of Richards et al. 2015, Table 5,
 * each criterion counted at its applied strength; with ClinGen SVI's addition (2020) that one very
 * strong and one supporting pathogenic criterion are likely pathogenic (PVS1 with PM2_Supporting).
 * Criteria supporting both directions at once are contradictory: uncertain significance.
 */
export function combineCriteria(criteria: readonly AppliedCriterion[]): CombinedClassification {
  const count = (direction: Direction, strength: Strength) => criteria.filter((c) => c.direction === direction && c.strength === strength).length
  const vs = count('pathogenic', 'VeryStrong')
  const s = count('pathogenic', 'Strong')
  const m = count('pathogenic', 'Moderate')
  const p = count('pathogenic', 'Supporting')
  const ba = count('benign', 'StandAlone')
  const bs = count('benign', 'Strong')
  const bp = count('benign', 'Supporting')

  const pathogenic =
    vs >= 2
      ? 'pathogenic: ≥2 very strong'
      : vs === 1 && (s >= 1 || m >= 2 || (m === 1 && p === 1) || p >= 2)
        ? 'pathogenic (i): 1 very strong with ≥1 strong, ≥2 moderate, 1 moderate and 1 supporting, or ≥2 supporting'
        : s >= 2
          ? 'pathogenic (ii): ≥2 strong'
          : s === 1 && (m >= 3 || (m === 2 && p >= 2) || (m === 1 && p >= 4))
            ? 'pathogenic (iii): 1 strong with ≥3 moderate, 2 moderate and ≥2 supporting, or 1 moderate and ≥4 supporting'
            : undefined
  const likelyPathogenic = pathogenic
    ? undefined
    : vs === 1 && m === 1
      ? 'likely pathogenic (i): 1 very strong and 1 moderate'
      : vs === 1 && p === 1
        ? 'likely pathogenic (ClinGen SVI 2020): 1 very strong and 1 supporting'
        : s === 1 && (m === 1 || m === 2)
          ? 'likely pathogenic (ii): 1 strong and 1–2 moderate'
          : s === 1 && p >= 2
            ? 'likely pathogenic (iii): 1 strong and ≥2 supporting'
            : m >= 3
              ? 'likely pathogenic (iv): ≥3 moderate'
              : m === 2 && p >= 2
                ? 'likely pathogenic (v): 2 moderate and ≥2 supporting'
                : m === 1 && p >= 4
                  ? 'likely pathogenic (vi): 1 moderate and ≥4 supporting'
                  : undefined
  const benign = ba >= 1 ? 'benign (i): stand-alone (BA1)' : bs >= 2 ? 'benign (ii): ≥2 strong' : undefined
  const likelyBenign = benign
    ? undefined
    : bs === 1 && bp >= 1
      ? 'likely benign (i): 1 strong and 1 supporting'
      : bp >= 2
        ? 'likely benign (ii): ≥2 supporting'
        : undefined

  const towardsPathogenic = pathogenic ?? likelyPathogenic
  const towardsBenign = benign ?? likelyBenign
  if (towardsPathogenic && towardsBenign)
    return { classification: 'uncertain_significance', rule: 'uncertain significance (ii): pathogenic and benign criteria are contradictory' }
  if (pathogenic) return { classification: 'pathogenic', rule: pathogenic }
  if (likelyPathogenic) return { classification: 'likely_pathogenic', rule: likelyPathogenic }
  if (benign) return { classification: 'benign', rule: benign }
  if (likelyBenign) return { classification: 'likely_benign', rule: likelyBenign }
  return { classification: 'uncertain_significance', rule: 'uncertain significance (i): the criteria for the other classes are not met' }
}

export const CLASSIFICATION_LABELS: Record<AcmgClassification, string> = {
  pathogenic: 'Pathogenic',
  likely_pathogenic: 'Likely pathogenic',
  uncertain_significance: 'Uncertain significance',
  likely_benign: 'Likely benign',
  benign: 'Benign',
}

/**
 * What a variant's ACMG criteria combine to when that is not the classification given to it: the
 * API's own suggestion (`criteria_suggest`), shown to a signer before they sign. Undefined when they
 * agree, when the variant is not classified, or when no criterion is applied (nothing to compare:
 * a classification may rest on evidence the criteria list does not carry, and the list is optional).
 */
export function classificationDisagreement(classification: string | null, criteria: readonly string[]): CombinedClassification | undefined {
  if (classification === null || criteria.length === 0) return undefined
  const parsed = parseCriteria(criteria)
  // Stored criteria were checked when written; a list that no longer reads suggests nothing.
  if (!parsed.ok) return undefined
  const suggested = combineCriteria(parsed.value)
  return suggested.classification === classification ? undefined : suggested
}

import { FAMILY_ROLES, HPO_RE, SOMATIC_ROLES, type SampleRole, type Sex } from './model.js'

/**
 * The pedigree rules, pure: who may be whose parent, which HPO terms are well formed, and whether
 * an order's family roles are consistent enough to sign. The stores load the records and call these.
 */
export interface PedigreeNode {
  id: string
  sex: Sex
  mother_id?: string
  father_id?: string
}

export type ParentRole = 'mother' | 'father'

/** Problems with `parent` as the `role` of `subjectId`, as messages naming the field; none when it may be. */
export function parentProblems(
  subjectId: string | undefined,
  role: ParentRole,
  parent: PedigreeNode | undefined,
  /** The parent's ancestors' nodes, as far as they go (the store loads them). */
  nodes: ReadonlyMap<string, PedigreeNode>,
): string[] {
  const field = `${role}_id`
  if (!parent) return [`${field}: no such subject in this project`]
  if (subjectId !== undefined && parent.id === subjectId) return [`${field}: a subject cannot be its own ${role}`]
  if (role === 'mother' && parent.sex === 'male') return [`${field}: subject ${parent.id} is male and cannot be a mother`]
  if (role === 'father' && parent.sex === 'female') return [`${field}: subject ${parent.id} is female and cannot be a father`]
  if (subjectId !== undefined && ancestorsOf(parent.id, nodes).has(subjectId)) {
    return [`${field}: subject ${parent.id} descends from this subject; a pedigree cannot loop`]
  }
  return []
}

/** Every ancestor of `id` reachable through `nodes` (mother and father links). */
export function ancestorsOf(id: string, nodes: ReadonlyMap<string, PedigreeNode>): Set<string> {
  const seen = new Set<string>()
  const todo = [id]
  while (todo.length) {
    const node = nodes.get(todo.pop()!)
    for (const parent of [node?.mother_id, node?.father_id]) {
      if (parent && !seen.has(parent)) {
        seen.add(parent)
        todo.push(parent)
      }
    }
  }
  return seen
}

/** A sex change that would contradict the subject's children's records (a mother cannot become male). */
export function sexChangeProblems(sex: Sex, childrenAsMother: readonly string[], childrenAsFather: readonly string[]): string[] {
  if (sex === 'male' && childrenAsMother.length) return [`sex: the subject is the mother of ${childrenAsMother.join(', ')} and cannot be male`]
  if (sex === 'female' && childrenAsFather.length) return [`sex: the subject is the father of ${childrenAsFather.join(', ')} and cannot be female`]
  return []
}

export const hpoProblems = (terms: readonly string[]): string[] =>
  terms.flatMap((t, i) => (HPO_RE.test(t) ? [] : [`phenotypes.${i}: '${t}' is not an HPO term id (HP: and 7 digits)`]))

/** One sample of an order, with what the family rules read of its subject. */
export interface RoleEntry {
  sample: string
  role: SampleRole
  subject: PedigreeNode
}

const isFamily = (r: SampleRole) => (FAMILY_ROLES as readonly string[]).includes(r)
const isSomatic = (r: SampleRole) => (SOMATIC_ROLES as readonly string[]).includes(r)

/**
 * The signing guards of DOMAIN.md on the roles of an order's samples: at least one sample; in a
 * family order exactly one proband, at most one mother and one father, each parent's sex matching
 * the role (a mother is not male, a father is not female, as in the pedigree), the parents not the
 * proband, and, where the proband's pedigree names a parent, the sample of that role being theirs.
 * A tumor/normal order has at most one of each, from one subject; the two kinds do not mix.
 */
export function familyProblems(entries: readonly RoleEntry[]): string[] {
  if (!entries.length) return ['the order has no samples']
  const problems: string[] = []
  const family = entries.filter((e) => isFamily(e.role))
  const somatic = entries.filter((e) => isSomatic(e.role))
  if (family.length && somatic.length)
    problems.push('family roles (proband, mother, father, sibling, relative) and tumor/normal roles cannot be mixed')
  const count = (role: SampleRole) => entries.filter((e) => e.role === role)
  if (family.length) {
    const probands = count('proband')
    if (probands.length !== 1) problems.push(`a family order needs exactly one proband (found ${probands.length})`)
    for (const role of ['mother', 'father'] as const) {
      const parents = count(role)
      if (parents.length > 1) problems.push(`at most one ${role} (found ${parents.length}: ${parents.map((p) => p.sample).join(', ')})`)
      for (const p of parents) {
        if (role === 'mother' && p.subject.sex === 'male') problems.push(`sample ${p.sample} is the mother but its subject is male`)
        if (role === 'father' && p.subject.sex === 'female') problems.push(`sample ${p.sample} is the father but its subject is female`)
      }
      const proband = probands.length === 1 ? probands[0]! : undefined
      for (const p of parents) {
        if (proband && p.subject.id === proband.subject.id) problems.push(`sample ${p.sample} is the ${role} but belongs to the proband's subject`)
        const recorded = proband?.subject[`${role}_id`]
        if (recorded && p.subject.id !== recorded) {
          problems.push(`sample ${p.sample} is the ${role} but the proband's recorded ${role} is subject ${recorded}`)
        }
      }
    }
  }
  if (somatic.length) {
    for (const role of SOMATIC_ROLES) {
      const found = count(role)
      if (found.length > 1) problems.push(`at most one ${role} sample (found ${found.length})`)
    }
    if (new Set(somatic.map((e) => e.subject.id)).size > 1) problems.push('the tumor and normal samples must come from one subject')
  }
  return problems
}

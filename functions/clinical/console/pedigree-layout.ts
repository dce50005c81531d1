import type { AffectedStatus, Sex } from '../../../domain/clinical/model.js'
import { ancestorsOf } from '../../../domain/clinical/pedigree.js'

/**
 * Where each member of a family goes in its pedigree drawing: one row per generation, partners side
 * by side (the male to the left, as pedigrees are drawn), children under their parents. Pure: the
 * page draws the SVG from it, and the tests check it as data.
 */
export interface PedigreeMember {
  id: string
  external_id: string
  sex: Sex
  affected_status: AffectedStatus
  mother_id?: string
  father_id?: string
}

export interface PlacedMember {
  member: PedigreeMember
  generation: number
  /** The symbol's centre, in the drawing's units. */
  x: number
  y: number
}

/** A child's line of descent: from the middle of its parents' line (or its one parent) down to it. */
export interface Descent {
  child: string
  parents: string[]
}

export interface PedigreeLayout {
  placed: PlacedMember[]
  /** Pairs that had a child together, drawn joined by a line. */
  couples: Array<[string, string]>
  descents: Descent[]
  width: number
  height: number
}

export const SYMBOL = 40
const STEP_X = 100
const STEP_Y = 120
const MARGIN = 60

/**
 * Lays out the family: a member's generation is one below its lowest-drawn parent in the family; a
 * member without parents in the family is drawn beside the partner they had a child with. The
 * pedigree rules (domain/clinical/pedigree.ts) keep families free of loops; the passes are bounded
 * all the same, so a record that slipped past them still draws.
 */
export function layoutPedigree(members: readonly PedigreeMember[]): PedigreeLayout {
  const byId = new Map(members.map((m) => [m.id, m]))
  const parentsOf = (m: PedigreeMember) => [m.father_id, m.mother_id].filter((p): p is string => !!p && byId.has(p) && p !== m.id)
  const couples = new Map<string, [string, string]>()
  for (const m of members) {
    const [a, b] = parentsOf(m)
    if (a && b) couples.set([a, b].sort().join('|'), [a, b])
  }
  const partners = (id: string) => [...couples.values()].flatMap(([a, b]) => (a === id ? [b] : b === id ? [a] : []))

  // A member is one row below its lowest parent. A member without parents in the family then moves
  // down to the row of a partner they had a child with (unless that partner descends from them),
  // once, from the rows the parents gave: partners of partners never chase each other down.
  const generation = new Map(members.map((m) => [m.id, 0]))
  const belowParents = () => {
    for (let pass = 0; pass <= members.length; pass++) {
      let moved = false
      for (const m of members) {
        const parents = parentsOf(m)
        const next = parents.length ? Math.max(...parents.map((p) => generation.get(p)!)) + 1 : 0
        if (next > generation.get(m.id)!) {
          generation.set(m.id, next)
          moved = true
        }
      }
      if (!moved) return
    }
  }
  belowParents()
  const founderRows = members.flatMap((m) =>
    parentsOf(m).length
      ? []
      : [[m.id, Math.max(0, ...partners(m.id).flatMap((p) => (ancestorsOf(p, byId).has(m.id) ? [] : [generation.get(p)!])))] as const],
  )
  for (const [id, row] of founderRows) generation.set(id, row)
  belowParents()

  const x = new Map<string, number>()
  const rows = [...new Set(generation.values())].sort((a, b) => a - b)
  const placed: PlacedMember[] = []
  const byName = (a: PedigreeMember, b: PedigreeMember) => a.external_id.localeCompare(b.external_id) || a.id.localeCompare(b.id)
  const maleFirst = (a: PedigreeMember, b: PedigreeMember) => Number(a.sex !== 'male') - Number(b.sex !== 'male') || byName(a, b)
  rows.forEach((g, rowIndex) => {
    const inRow = members.filter((m) => generation.get(m.id) === g)
    const under = (m: PedigreeMember) => {
      const xs = parentsOf(m).flatMap((p) => (x.has(p) ? [x.get(p)!] : []))
      return xs.length ? xs.reduce((s, v) => s + v, 0) / xs.length : undefined
    }
    // Children first, in their parents' order; then each member without parents here beside a partner.
    const order = inRow.filter((m) => under(m) !== undefined).sort((a, b) => under(a)! - under(b)! || maleFirst(a, b))
    for (const m of inRow.filter((m) => under(m) === undefined).sort(maleFirst)) {
      if (order.includes(m)) continue
      const partner = partners(m.id)
        .map((p) => order.findIndex((o) => o.id === p))
        .find((i) => i >= 0)
      if (partner === undefined) {
        order.push(m)
        // Founders come as couples: the partner without parents follows at once.
        for (const p of partners(m.id)) {
          const other = inRow.find((o) => o.id === p && under(o) === undefined && !order.includes(o))
          if (other) order.push(other)
        }
      } else if (m.sex === 'male') order.splice(partner, 0, m)
      else order.splice(partner + 1, 0, m)
    }
    // The row moves right (never left of the margin) so that its children sit, on the whole, under their parents.
    const children = order.flatMap((m, i) => {
      const u = under(m)
      return u === undefined ? [] : [{ i, u }]
    })
    const shift = children.length
      ? Math.max(
          0,
          Math.round(children.reduce((sum, ch) => sum + ch.u - (MARGIN + ch.i * STEP_X), 0) / children.length / (STEP_X / 2)) * (STEP_X / 2),
        )
      : 0
    order.forEach((m, i) => {
      const px = MARGIN + shift + i * STEP_X
      x.set(m.id, px)
      placed.push({ member: m, generation: g, x: px, y: MARGIN + rowIndex * STEP_Y })
    })
  })
  const right = Math.max(MARGIN, ...placed.map((p) => p.x))
  return {
    placed,
    couples: [...couples.values()],
    descents: members.flatMap((m) => (parentsOf(m).length ? [{ child: m.id, parents: parentsOf(m) }] : [])),
    width: right + MARGIN,
    height: 2 * MARGIN + (rows.length - 1) * STEP_Y + 20,
  }
}

import { html, type Raw } from '../../../lib/pages.js'
import { layoutPedigree, SYMBOL, type PedigreeMember } from './pedigree-layout.js'

/**
 * A family's pedigree as an inline SVG, drawn on the server (no script): squares for males, circles
 * for females, diamonds for unknown or other sex; affected filled, unaffected open, unknown status
 * marked "?"; partners joined by a line, children hanging from it. Colours are presentation
 * attributes (the console's CSP allows no inline style). The drawing is an image with a text
 * alternative; the page always puts the same family in a table beside it (`pedigreeTable`).
 */
export function pedigreeSvg(familyId: string, members: readonly PedigreeMember[], current?: string): Raw {
  const layout = layoutPedigree(members)
  const at = new Map(layout.placed.map((p) => [p.member.id, p]))
  const half = SYMBOL / 2
  const lines = [
    ...layout.couples.map(([a, b]) => {
      const [p, q] = [at.get(a)!, at.get(b)!]
      return html`<line x1="${p.x}" y1="${p.y}" x2="${q.x}" y2="${q.y}" />`
    }),
    ...layout.descents.map((d) => {
      const parents = d.parents.map((id) => at.get(id)!)
      const child = at.get(d.child)!
      const fromX = parents.reduce((s, p) => s + p.x, 0) / parents.length
      const fromY = Math.max(...parents.map((p) => p.y)) + (parents.length > 1 ? 0 : half)
      const midY = child.y - half - 20
      return html`<path d="M${fromX} ${fromY} V${midY} H${child.x} V${child.y - half}" fill="none" />`
    }),
  ]
  const symbols = layout.placed.map(({ member: m, x, y }) => {
    const fill = m.affected_status === 'affected' ? '#1b1f24' : '#ffffff'
    const width = m.id === current ? 4 : 2
    const shape =
      m.sex === 'male'
        ? html`<rect x="${x - half}" y="${y - half}" width="${SYMBOL}" height="${SYMBOL}" fill="${fill}" stroke="#1b1f24" stroke-width="${width}" />`
        : m.sex === 'female'
          ? html`<circle cx="${x}" cy="${y}" r="${half}" fill="${fill}" stroke="#1b1f24" stroke-width="${width}" />`
          : html`<polygon
              points="${x},${y - half} ${x + half},${y} ${x},${y + half} ${x - half},${y}"
              fill="${fill}"
              stroke="#1b1f24"
              stroke-width="${width}"
            />`
    const unknown = m.affected_status === 'unknown' ? html`<text x="${x}" y="${y + 6}" text-anchor="middle" font-size="18">?</text>` : ''
    return html`<g>
      <title>${describe(m)}</title>
      ${shape}${unknown}
      <text x="${x}" y="${y + half + 16}" text-anchor="middle" font-size="12">${m.external_id}</text>
    </g>`
  })
  return html`<svg
    class="pedigree"
    role="img"
    aria-labelledby="pedigree-title"
    viewBox="0 0 ${layout.width} ${layout.height}"
    width="${layout.width}"
    height="${layout.height}"
    xmlns="http://www.w3.org/2000/svg"
  >
    <title id="pedigree-title">Pedigree of family ${familyId}: ${members.length} member(s); the table below lists them</title>
    <g stroke="#1b1f24" stroke-width="2">${lines}</g>
    <g font-family="sans-serif" fill="#1b1f24">${symbols}</g>
  </svg>`
}

const SEX_WORD = { male: 'male', female: 'female', unknown: 'sex unknown', other: 'other sex' } as const

function describe(m: PedigreeMember): string {
  return `${m.external_id}: ${SEX_WORD[m.sex]}, ${m.affected_status === 'unknown' ? 'affected status unknown' : m.affected_status}`
}

import type { Letterhead as ProjectLetterhead } from '../../../lib/auth/access.js'
import { html, Raw } from '../../../lib/pages.js'
import { CLASSIFICATION_LABELS, classificationDisagreement, type AcmgClassification } from '../../../domain/reports/acmg.js'
import type { SignatureRecord } from '../../../domain/reports/model.js'
import type { SnapshotContent, SnapshotVariant } from '../../../domain/reports/snapshot.js'
import { snapshotTemplate } from '../../../domain/reports/template.js'

/**
 * The report as a document, from a snapshot's content: what the sign-off page shows (what is shown
 * is what is signed) and what the printable view prints. Plain HTML, no script.
 */

export interface Letterhead {
  organization: string
  project: string
  /** The project's own letterhead, when its admins set one (PUT /projects/{id}/letterhead at the admin service). */
  details?: ProjectLetterhead
}

const words = (value: string | null | undefined) => (value ? value.replaceAll('_', ' ') : '')
const utc = (iso: string) =>
  iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')
    .replace(/Z$/, ' UTC')
const utcDate = (d: { toDate(): Date }) => utc(d.toDate().toISOString())

/**
 * A page: the letterhead (`header`, a banner landmark), the document in a <main> landmark, and a
 * `footer`; `stylesheets` adds the page's own (the printed report's running header, print.ts).
 */
export function pageHtml(opts: { title: string; assets: string; body: Raw; header?: Raw; footer?: Raw; stylesheets?: string[] }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${html`${opts.title}`}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${html`${opts.assets}`}report.css">${(opts.stylesheets ?? []).map((href) => html`<link rel="stylesheet" href="${href}" />`).join('')}</head>
<body>
${opts.header ?? ''}<main id="main">
${opts.body}
</main>${opts.footer ?? ''}
</body></html>`
}

/**
 * An HGVS name or a position that may break only where a reader expects it: after ':', '.' and
 * '>' (NM_000000.4:<wbr>c.<wbr>1642G><wbr>A), so a long name wraps on a phone and on paper
 * without splitting a number.
 */
export function breakable(text: string): Raw {
  return new Raw(
    text
      .split(/(?<=[:.>])/)
      .map((part) => html`${part}`.value)
      .join('<wbr>'),
  )
}

export function letterheadHtml(lh: Letterhead, right?: Raw): Raw {
  const d = lh.details
  const contacts = [d?.phone, d?.email, d?.website].filter(Boolean).join(' · ')
  return html`<header class="letterhead">
    <div>
      <div class="lab">${d?.laboratory ?? lh.organization}</div>
      <div class="lines">
        ${d ? html`${d.address?.length ? html`${d.address.join(', ')}<br />` : ''}${contacts ? html`${contacts}<br />` : ''}${d.accreditation ? html`${d.accreditation}<br />` : ''}` : ''}${lh.project}
      </div>
    </div>
    <div class="right">${right ?? ''}${d?.director ? html`<br />${d.director}` : ''}</div>
  </header>`
}

const effective = (v: SnapshotVariant, field: 'transcript' | 'hgvs_c' | 'hgvs_p') => v[field] ?? v.variant?.[field] ?? null

function variantName(v: SnapshotVariant): Raw {
  const genes = v.variant?.genes.join(', ') || 'no gene'
  const transcript = effective(v, 'transcript')
  const c = effective(v, 'hgvs_c')
  const p = effective(v, 'hgvs_p')
  return html`<strong>${genes}</strong
    ><br />${transcript ? html`<code>${breakable(`${transcript}:`)}</code><wbr />` : ''}${c ? html`<code>${breakable(c)}</code>` : ''}${
      p ? html` <code>${breakable(p)}</code>` : ''
    }`
}

function position(v: SnapshotVariant): Raw {
  if (!v.variant) return html`<span class="muted">not in the current variant cache</span><br /><code>${v.variant_id}</code>`
  const x = v.variant
  return html`<code>${x.assembly ?? 'unknown build'} ${breakable(`${x.chrom}:${x.pos} ${x.ref}>${x.alt}`)}</code
    >${x.consequence ? html`<br />${words(x.consequence)}` : ''}`
}

function zygosities(v: SnapshotVariant): Raw {
  if (!v.variant?.calls.length) return html`<span class="muted">–</span>`
  return html`${v.variant.calls.map(
    (call, i) =>
      html`${i ? html`<br />` : ''}${call.role ?? call.sample}:
      ${
        call.genotype === null
          ? html`<span class="muted">not in the VCF</span>`
          : html`${words(call.zygosity ?? '')} <span class="muted">(${call.genotype})</span>`
      }`,
  )}`
}

function classification(v: SnapshotVariant): Raw {
  const cls = v.acmg_classification as AcmgClassification | null
  return html`<span class="classification ${cls ?? ''}">${cls ? CLASSIFICATION_LABELS[cls] : 'not classified'}</span>${
      v.acmg_criteria.length ? html`<br /><span class="muted">${v.acmg_criteria.join(', ')}</span>` : ''
    }`
}

/** The patient a report is about, as a line: the proband's name and identifier (the first sample's person without a proband). */
export function patientOf(content: SnapshotContent): string {
  const proband = content.order.samples.find((s) => s.role === 'proband') ?? content.order.samples[0]
  const subject = proband?.subject
  if (!subject) return 'not recorded'
  return subject.display_name ? `${subject.display_name} (${subject.external_id})` : subject.external_id
}

/** The report's body: the people tested and the order, the result, the variants with their interpretation, notes. */
export function documentHtml(content: SnapshotContent): Raw {
  const { report, order } = content
  const included = content.variants.filter((v) => v.include_in_report)
  const excluded = content.variants.length - included.length
  const proband = order.samples.find((s) => s.role === 'proband') ?? order.samples[0]
  const subject = proband?.subject
  const template = snapshotTemplate(report)
  return html`
    <h1>${template?.title ?? 'Genetic test report'}</h1>
    ${
      report.amendment
        ? html`<p class="banner info">
            Revision ${report.revision} (${report.amendment.kind}): it replaces report <code>${report.replaces}</code>. Reason:
            ${report.amendment.reason}
          </p>`
        : ''
    }
    <h2>Patient and order</h2>
    <table class="fields">
      <tr>
        <th>Patient</th>
        <td>
          ${subject?.display_name ?? ''}
          ${subject ? html`<span class="muted">(${subject.external_id})</span>` : html`<span class="muted">not recorded</span>`}
        </td>
      </tr>
      ${
        subject
          ? html`<tr>
              <th>Sex, date of birth</th>
              <td>${words(subject.sex)}${subject.birth_date ? `, born ${subject.birth_date}` : ''}</td>
            </tr>`
          : ''
      }
      ${
        subject?.phenotypes.length
          ? html`<tr>
              <th>Phenotype (HPO)</th>
              <td>${subject.phenotypes.join(', ')}</td>
            </tr>`
          : ''
      }
      <tr>
        <th>Order</th>
        <td>${order.accession} <span class="muted">(${order.test_code})</span></td>
      </tr>
      ${
        order.indication
          ? html`<tr>
              <th>Indication</th>
              <td>${order.indication}</td>
            </tr>`
          : ''
      }
      ${
        order.requester
          ? html`<tr>
              <th>Requested by</th>
              <td>${order.requester.name}${order.requester.organization ? `, ${order.requester.organization}` : ''}</td>
            </tr>`
          : ''
      }
      <tr>
        <th>Samples</th>
        <td>
          ${order.samples.map(
            (s, i) =>
              html`${i ? html`<br />` : ''}${s.role}: ${s.external_id}
                <span class="muted">(${s.type}${s.subject ? `, ${s.subject.external_id}, ${words(s.subject.affected_status)}` : ''})</span>`,
          )}
        </td>
      </tr>
      <tr>
        <th>Report</th>
        <td><code>${report.id}</code>, revision ${report.revision}</td>
      </tr>
    </table>

    <h2>Result</h2>
    ${report.summary ? html`<p>${report.summary}</p>` : ''}
    <p><strong>Conclusion:</strong> ${report.conclusion ?? html`<span class="muted">none written</span>`}</p>

    <h2>Variants</h2>
    ${
      included.length
        ? html`<table class="variants">
            <thead>
              <tr>
                <th>Gene and variant</th>
                <th>Position</th>
                <th>Zygosity</th>
                <th>Inheritance</th>
                <th>Classification</th>
              </tr>
            </thead>
            <tbody>
              ${included.map(
                (v) =>
                  html`<tr class="variant">
                    <td data-label="Gene and variant">${variantName(v)}</td>
                    <td data-label="Position">${position(v)}</td>
                    <td data-label="Zygosity">${zygosities(v)}</td>
                    <td data-label="Inheritance">${words(v.inheritance) || html`<span class="muted">–</span>`}</td>
                    <td data-label="Classification">${classification(v)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p>No variant is reported.</p>`
    }
    ${excluded ? html`<p class="muted">${excluded} further variant${excluded === 1 ? ' was' : 's were'} reviewed and not included in this report.</p>` : ''}
    ${
      included.some((v) => v.interpretation)
        ? html`<h2>Interpretation</h2>
            ${included
              .filter((v) => v.interpretation)
              .map(
                (v) =>
                  html`<div class="variant">
                    <h3>${v.variant?.genes.join(', ') || v.variant_id} ${effective(v, 'hgvs_c') ?? ''}</h3>
                    <p>${v.interpretation}</p>
                  </div>`,
              )}`
        : ''
    }
    ${
      report.notes
        ? html`<h2>Notes</h2>
            <p>${report.notes}</p>`
        : ''
    }
    ${
      template
        ? html`<section class="methods" aria-labelledby="methods">
            <h2 id="methods">Methods and limitations</h2>
            ${template.methods.map((line) => html`<p>${line}</p>`)}
            <ul>
              ${template.limitations.map((line) => html`<li>${line}</li>`)}
            </ul>
          </section>`
        : ''
    }
  `
}

/**
 * The included variants whose classification is not what their ACMG criteria combine to (the API's
 * `criteria_suggest`), for the signer to see before they sign; empty when all agree.
 */
export function disagreementsHtml(content: SnapshotContent): Raw {
  const found = content.variants.flatMap((v) => {
    const suggested = v.include_in_report ? classificationDisagreement(v.acmg_classification, v.acmg_criteria) : undefined
    return suggested ? [{ v, suggested }] : []
  })
  if (!found.length) return html``
  return html`<section class="banner warn disagreements" id="disagreements" aria-labelledby="disagreements-title">
    <h2 id="disagreements-title">
      Check before you sign: ${found.length === 1 ? 'a classification differs' : 'classifications differ'} from the ACMG criteria
    </h2>
    <ul class="reasons">
      ${found.map(
        ({ v, suggested }) =>
          html`<li>
            ${v.variant?.genes.join(', ') || v.variant_id} ${effective(v, 'hgvs_c') ? html`<code>${breakable(effective(v, 'hgvs_c')!)}</code>` : ''}:
            classified
            <strong>${CLASSIFICATION_LABELS[v.acmg_classification as AcmgClassification] ?? v.acmg_classification}</strong>; its criteria
            ${v.acmg_criteria.join(', ')} combine to <strong>${CLASSIFICATION_LABELS[suggested.classification]}</strong> (${suggested.rule}).
          </li>`,
      )}
    </ul>
    <p>Signing is still possible: a classification may rest on evidence the criteria do not list. If it should not, send the report back to draft.</p>
  </section>`
}

/** The snapshot a page shows: which one it is and its hash, so the signer can tell what they sign. */
export function snapshotFacts(snapshot: { id: string; seq: number; sha256: string; taken_at: string }): Raw {
  return html`<table class="fields snapshot">
    <tr>
      <th>Snapshot</th>
      <td><code>${snapshot.id}</code> (no. ${snapshot.seq}, taken ${utc(snapshot.taken_at)})</td>
    </tr>
    <tr>
      <th>SHA-256</th>
      <td class="hash" id="sha256">${snapshot.sha256}</td>
    </tr>
  </table>`
}

/** The signature block of a signed report: who, when, what it means, how they proved who they were, and exactly what they signed. */
export function signatureBlock(signatures: SignatureRecord[]): Raw {
  return html`${signatures.map(
    (s) =>
      html`<div class="signature">
        <div class="who">
          ${s.signer.name ?? s.signer.email ?? s.signer.id}${s.signer.email && s.signer.name ? html` <span class="muted">&lt;${s.signer.email}&gt;</span>` : ''}
        </div>
        <p>
          Electronically signed ${utcDate(s.at)}: <strong>${s.meaning}</strong>. Identity confirmed at the identity provider at
          ${utcDate(s.auth_time)}.
        </p>
        <p class="muted">Signed content: snapshot <code>${s.snapshot_id}</code>, SHA-256 <span class="hash">${s.sha256}</span></p>
      </div>`,
  )}`
}

export function messagePage(opts: {
  title: string
  assets: string
  tone: 'warn' | 'ok' | 'info'
  lines: string[]
  links?: Array<{ href: string; text: string }>
}): string {
  return pageHtml({
    title: opts.title,
    assets: opts.assets,
    body: html`<h1>${opts.title}</h1>
      <div class="banner ${opts.tone}" role="${opts.tone === 'warn' ? 'alert' : 'status'}" id="message">
        ${
          opts.lines.length === 1
            ? opts.lines[0]
            : html`<ul class="reasons">
                ${opts.lines.map((l) => html`<li>${l}</li>`)}
              </ul>`
        }
      </div>
      ${opts.links?.length ? html`<p>${opts.links.map((l, i) => html`${i ? ' · ' : ''}<a href="${l.href}">${l.text}</a>`)}</p>` : ''}`,
  })
}

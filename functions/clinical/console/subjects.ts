import type { Context, Hono } from 'hono'
import {
  badge,
  checkForm,
  csrfField,
  field,
  html,
  pager,
  redirectWithNotice,
  renderConsole,
  type ConsoleProject,
  type Raw,
} from '../../../lib/console/index.js'
import { auditContext, type AppEnv } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { FROZEN_SUBJECT_FIELDS } from '../../../domain/clinical/decide-subject.js'
import { frozenBy } from '../../../domain/clinical/decide.js'
import { AFFECTED_STATUSES, SEXES, type SampleRecord, type SubjectRecord } from '../../../domain/clinical/model.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import { CreateSubject, SubjectListQuery, UpdateSubject } from '../schemas.js'
import { projectOf } from '../views.js'
import {
  formPage,
  clinicalPage,
  projectBase,
  formAlert,
  frozenField,
  listQuery,
  optionsOf,
  refusedForm,
  type FieldErrors,
  type FormStatus,
} from './forms.js'
import { historyLink } from './links.js'
import { pedigreeSvg } from './pedigree-svg.js'

/** The subjects pages: list and search, create, a subject with its samples and family, edit (frozen fields shown as frozen), a family's pedigree. */

/** What the subjects search box matches, in the order it tries them. */
const SEARCH_BY = ['external_id', 'family_id', 'name'] as const
const SEARCH_WORDS = { external_id: 'external id', family_id: 'family', name: 'a name containing' } as const

const FIELDS = ['external_id', 'display_name', 'sex', 'birth_date', 'affected_status', 'phenotypes', 'family_id', 'mother_id', 'father_id'] as const
/** Families and parent choices read at most this many subjects (a family is small; the parent list is the newest of the project). */
const FAMILY_MAX = 200

const base = projectBase
const view = (page: ConsoleProject) => ({ session: page, project: { project: page.project, org: page.org }, section: 'subjects' as const })

export const affectedBadge = (s: Pick<SubjectRecord, 'affected_status'>): Raw =>
  badge(s.affected_status, s.affected_status === 'affected' ? 'warn' : s.affected_status === 'unaffected' ? 'ok' : 'neutral')

async function loadSubject(c: Context<ClinicalEnv>, page: ConsoleProject, id: string): Promise<SubjectRecord | undefined> {
  return UUID_RE.test(id) ? c.get('deps').subjects.get(page.project.id, id) : undefined
}

/** Every sample of a subject (a signed order holding any of them freezes the subject's pedigree fields). */
async function samplesOf(c: Context<ClinicalEnv>, page: ConsoleProject, subjectId: string): Promise<SampleRecord[]> {
  return (await c.get('deps').samples.list(page.project.id, { subject_id: subjectId }, { page_size: 1000 })).items
}

const notFoundBody = (what: string) =>
  html`<h1>Not found</h1>
    <p class="notice warn" role="alert" id="error">There is no such ${what} in this project.</p>`

/** The subjects a parent field may name: the project's newest, mothers not male and fathers not female (the pedigree rules say the rest). */
async function parentChoices(c: Context<ClinicalEnv>, page: ConsoleProject) {
  const all = (await c.get('deps').subjects.list(page.project.id, {}, { page_size: FAMILY_MAX })).items
  const label = (s: SubjectRecord) => `${s.external_id}${s.display_name ? ` (${s.display_name})` : ''}${s.family_id ? `, family ${s.family_id}` : ''}`
  return {
    mother: all.filter((s) => s.sex !== 'male').map((s) => ({ value: s.id, label: label(s) })),
    father: all.filter((s) => s.sex !== 'female').map((s) => ({ value: s.id, label: label(s) })),
  }
}

type SubjectValues = Partial<Record<(typeof FIELDS)[number], string>>

const valuesOf = (s: SubjectRecord): SubjectValues => ({
  external_id: s.external_id,
  display_name: s.display_name,
  sex: s.sex,
  birth_date: s.birth_date,
  affected_status: s.affected_status,
  phenotypes: s.phenotypes.join(' '),
  family_id: s.family_id,
  mother_id: s.mother_id,
  father_id: s.father_id,
})

/**
 * The subject form: every field, or (editing a subject a signed order froze) the frozen ones shown
 * as values with the reason, not as fields, so they are not sent.
 */
async function subjectForm(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  opts: { action: string; values: SubjectValues; errors: FieldErrors; submit: string; frozenBy?: string[] },
): Promise<Raw> {
  const { values: v, errors: e } = opts
  const parents = await parentChoices(c, page)
  const frozen = new Set<string>(opts.frozenBy?.length ? FROZEN_SUBJECT_FIELDS : [])
  const parentName = (id: string | undefined, list: Array<{ value: string; label: string }>) => list.find((o) => o.value === id)?.label ?? id ?? ''
  const shown: SubjectValues = { ...v, mother_id: parentName(v.mother_id, parents.mother), father_id: parentName(v.father_id, parents.father) }
  const one = (name: (typeof FIELDS)[number], label: string, control: Raw) => (frozen.has(name) ? frozenField(label, shown[name] ?? '') : control)
  return html`<form method="post" action="${opts.action}" class="stack" id="subject-form" novalidate>
    ${csrfField(page)} ${formAlert(e)}
    ${
      frozen.size
        ? html`<p class="notice info" id="frozen-why">
            Signed order ${opts.frozenBy?.join(', ')} holds this subject's samples: the fields marked frozen feed its samplesheet and pedigree and
            cannot change. To correct one, enter the order in error. The name, birth date and HPO terms stay editable.
          </p>`
        : ''
    }
    ${one('external_id', 'External id', field({ name: 'external_id', label: 'External id', value: v.external_id, error: e.external_id, required: true, hint: "The lab's identifier (case or MRN), unique in the project; no spaces" }))}
    ${field({ name: 'display_name', label: 'Name', value: v.display_name, error: e.display_name, hint: 'Optional' })}
    ${one('sex', 'Sex', field({ name: 'sex', label: 'Sex', value: v.sex ?? 'unknown', error: e.sex, options: optionsOf(SEXES) }))}
    ${field({ name: 'birth_date', label: 'Birth date', type: 'date', value: v.birth_date, error: e.birth_date, hint: 'Optional, YYYY-MM-DD' })}
    ${one('affected_status', 'Affected status', field({ name: 'affected_status', label: 'Affected status', value: v.affected_status ?? 'unknown', error: e.affected_status, options: optionsOf(AFFECTED_STATUSES) }))}
    ${field({ name: 'phenotypes', label: 'Phenotypes (HPO terms)', value: v.phenotypes, error: e.phenotypes, hint: 'HPO term ids separated by spaces or commas, e.g. HP:0001250 HP:0001263' })}
    ${one('family_id', 'Family id', field({ name: 'family_id', label: 'Family id', value: v.family_id, error: e.family_id, hint: 'Optional: the family (pedigree) the subject belongs to' }))}
    ${one('mother_id', 'Mother', field({ name: 'mother_id', label: 'Mother', value: v.mother_id ?? '', error: e.mother_id, options: [{ value: '', label: '— none recorded —' }, ...parents.mother] }))}
    ${one('father_id', 'Father', field({ name: 'father_id', label: 'Father', value: v.father_id ?? '', error: e.father_id, options: [{ value: '', label: '— none recorded —' }, ...parents.father] }))}
    <div class="actions"><button type="submit" id="save-subject">${opts.submit}</button></div>
  </form>`
}

/** The form's text values as the API's JSON: blanks are absent (create) or null (edit: cleared), HPO terms split on spaces and commas. */
function formBody(page: ConsoleProject, fields: readonly string[], clear: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of fields) {
    const value = page.form.get(name)
    if (name === 'phenotypes') out.phenotypes = value ? value.split(/[\s,]+/).filter(Boolean) : clear ? null : undefined
    else if (value) out[name] = value
    else if (clear && !['external_id', 'sex', 'affected_status'].includes(name)) out[name] = null
  }
  return out
}

export function subjectPages(app: Hono<AppEnv<ClinicalDeps>>) {
  app.get('/p/:project/subjects', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const { subjects } = c.get('deps')
    const q = c.req.query('q')?.trim() ?? ''
    const { affected_status: affected } = listQuery(c, SubjectListQuery.pick({ affected_status: true }), ['affected_status'])
    const filters = { affected_status: affected }
    const by = SEARCH_BY.find((k) => k === c.req.query('by'))
    const pageQuery = { page_token: c.req.query('page_token'), page_size: 50 }
    if (q && !by) {
      // A search names what it matched (an exact external id, else a family id, else a part of a name) in
      // the address, so that its "Next page" asks the same query its page token was made with.
      const url = new URL(c.req.url)
      for (const kind of SEARCH_BY) {
        const found = await subjects.list(page.project.id, { ...filters, [kind]: q }, { page_size: 1 })
        if (found.items.length || kind === 'name') {
          url.searchParams.set('by', kind)
          return c.redirect(`${base(c, page)}/subjects${url.search}`, 302)
        }
      }
    }
    const result = await subjects.list(page.project.id, q && by ? { ...filters, [by]: q } : filters, pageQuery)
    const searched = q && by ? `${SEARCH_WORDS[by]} ${q}` : ''
    const b = base(c, page)
    const rows = result.items.map(
      (s) =>
        html`<tr>
          <td><a href="${b}/subjects/${s.id}">${s.external_id}</a></td>
          <td>${s.display_name ?? ''}</td>
          <td>${s.sex}</td>
          <td>${affectedBadge(s)}</td>
          <td>${s.family_id ? html`<a href="${b}/families/${encodeURIComponent(s.family_id)}">${s.family_id}</a>` : ''}</td>
          <td>${s.sample_count}</td>
        </tr>`,
    )
    const body = html`<h1>Subjects</h1>
      <p><a class="button" href="${b}/subjects/new" id="new-subject">New subject</a> <a href="${b}/samples">All samples</a></p>
      <form method="get" action="${b}/subjects" class="stack" role="search">
        ${field({ name: 'q', label: 'Find a subject', value: q, hint: 'An exact external id (P-2026-0042) or family id (FAM-0042), or a part of a name' })}
        ${field({ name: 'affected_status', label: 'Affected status', value: affected ?? '', options: optionsOf(AFFECTED_STATUSES, 'any') })}
        <div class="actions"><button type="submit" class="secondary">Search</button></div>
      </form>
      <div class="table-wrap">
        <table id="subjects">
          <caption>
            ${searched ? `Subjects matching ${searched}` : 'Subjects, newest first'}
          </caption>
          <thead>
            <tr>
              <th scope="col">External id</th>
              <th scope="col">Name</th>
              <th scope="col">Sex</th>
              <th scope="col">Affected</th>
              <th scope="col">Family</th>
              <th scope="col">Samples</th>
            </tr>
          </thead>
          <tbody>
            ${
              rows.length
                ? rows
                : html`<tr>
                    <td colspan="6">No subjects${searched ? ` with ${searched}` : ''}.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${pager(c, result.nextPageToken)}`
    return renderConsole(c, { ...view(page), title: 'Subjects', body })
  })

  app.get('/p/:project/subjects/new', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    return newSubjectPage(c, page, { family_id: c.req.query('family_id') })
  })

  app.post('/p/:project/subjects', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const values = Object.fromEntries(FIELDS.map((f) => [f, page.form.get(f)])) as SubjectValues
    const again = (errors: FieldErrors, status: FormStatus) => newSubjectPage(c, page, values, { errors, status })
    const parsed = checkForm(CreateSubject, formBody(page, FIELDS, false))
    if (!parsed.ok) return again(parsed.errors, 400)
    try {
      const subject = await c.get('deps').subjects.create(auditContext(c), projectOf(c), parsed.data, page.principal.user.id)
      return redirectWithNotice(c, `${b}/subjects/${subject.id}`, `Subject ${subject.external_id} created.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, FIELDS)
      return again(errors, status)
    }
  })

  app.get('/p/:project/subjects/:id', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const b = base(c, page)
    const subject = await loadSubject(c, page, c.req.param('id'))
    if (!subject) return renderConsole(c, { ...view(page), title: 'Not found', body: notFoundBody('subject') }, 404)
    const samples = await samplesOf(c, page, subject.id)
    const signed = frozenBy(samples)
    const family = subject.family_id
      ? (await c.get('deps').subjects.list(page.project.id, { family_id: subject.family_id }, { page_size: FAMILY_MAX })).items
      : []
    const parentLink = async (id: string | undefined) => {
      if (!id) return '—'
      const p = await c.get('deps').subjects.get(page.project.id, id)
      return p ? html`<a href="${b}/subjects/${p.id}">${p.external_id}</a>` : id
    }
    const body = html`<h1>Subject ${subject.external_id}</h1>
      ${signed.length ? html`<p class="notice info" id="frozen">Signed order ${signed.join(', ')} holds samples of this subject: its ${FROZEN_SUBJECT_FIELDS.join(', ')} are frozen.</p>` : ''}
      <p class="actions">
        <a class="button" href="${b}/subjects/${subject.id}/edit" id="edit-subject">Edit</a>
        <a class="button secondary" href="${b}/samples/new?subject=${subject.id}" id="add-sample">Add a sample</a>
        ${historyLink(c, page, 'subject', subject.id)}
      </p>
      <div class="table-wrap">
        <table class="fields">
          <caption class="visually-hidden">
            The subject's record
          </caption>
          <tr>
            <th scope="row">External id</th>
            <td>${subject.external_id}</td>
          </tr>
          <tr>
            <th scope="row">Name</th>
            <td>${subject.display_name ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">Sex</th>
            <td>${subject.sex}</td>
          </tr>
          <tr>
            <th scope="row">Birth date</th>
            <td>${subject.birth_date ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">Affected status</th>
            <td>${affectedBadge(subject)}</td>
          </tr>
          <tr>
            <th scope="row">Phenotypes</th>
            <td>${subject.phenotypes.length ? subject.phenotypes.map((p) => html`<code>${p}</code> `) : '—'}</td>
          </tr>
          <tr>
            <th scope="row">Family</th>
            <td>${subject.family_id ? html`<a href="${b}/families/${encodeURIComponent(subject.family_id)}">${subject.family_id}</a>` : '—'}</td>
          </tr>
          <tr>
            <th scope="row">Mother</th>
            <td>${await parentLink(subject.mother_id)}</td>
          </tr>
          <tr>
            <th scope="row">Father</th>
            <td>${await parentLink(subject.father_id)}</td>
          </tr>
        </table>
      </div>
      <h2>Samples</h2>
      ${sampleTable(b, samples, `Samples of ${subject.external_id}`)}
      ${
        subject.family_id
          ? html`<h2>Family ${subject.family_id}</h2>
              ${pedigree(b, subject.family_id, family, subject.id)}`
          : ''
      }`
    return renderConsole(c, {
      ...view(page),
      title: `Subject ${subject.external_id}`,
      crumbs: [{ href: `${b}/subjects`, text: 'Subjects' }],
      body,
    })
  })

  app.get('/p/:project/subjects/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    return editPage(c, page, c.req.param('id'))
  })

  app.post('/p/:project/subjects/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const id = c.req.param('id')
    const subject = await loadSubject(c, page, id)
    if (!subject) return renderConsole(c, { ...view(page), title: 'Not found', body: notFoundBody('subject') }, 404)
    // Only the fields the form sent: a frozen field is not in the form, so it is not sent (and if it is, the decision refuses it).
    const sent = FIELDS.filter((f) => page.form.all(f).length > 0)
    const parsed = checkForm(UpdateSubject, formBody(page, sent, true))
    const values = { ...valuesOf(subject), ...Object.fromEntries(sent.map((f) => [f, page.form.get(f)])) } as SubjectValues
    if (!parsed.ok) return editPage(c, page, id, { values, errors: parsed.errors, status: 400 })
    try {
      const { phenotypes, ...rest } = parsed.data
      const updated = await c.get('deps').subjects.update(auditContext(c), projectOf(c), subject.id, {
        ...rest,
        ...(phenotypes !== undefined ? { phenotypes: phenotypes ?? [] } : {}),
      })
      return redirectWithNotice(c, `${b}/subjects/${updated.id}`, `Subject ${updated.external_id} saved.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, FIELDS)
      return editPage(c, page, id, { values, errors, status })
    }
  })

  app.get('/p/:project/families/:family', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const b = base(c, page)
    const familyId = c.req.param('family')
    const members = (await c.get('deps').subjects.list(page.project.id, { family_id: familyId }, { page_size: FAMILY_MAX })).items
    if (!members.length) return renderConsole(c, { ...view(page), title: 'Not found', body: notFoundBody('family') }, 404)
    const body = html`<h1>Family ${familyId}</h1>
      <p><a class="button secondary" href="${b}/subjects/new?family_id=${encodeURIComponent(familyId)}" id="add-member">Add a family member</a></p>
      ${pedigree(b, familyId, members)}`
    return renderConsole(c, { ...view(page), title: `Family ${familyId}`, crumbs: [{ href: `${b}/subjects`, text: 'Subjects' }], body })
  })
}

async function editPage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  id: string,
  again?: { values: SubjectValues; errors: FieldErrors; status: FormStatus },
): Promise<Response> {
  const b = base(c, page)
  const subject = await loadSubject(c, page, id)
  if (!subject) return renderConsole(c, { ...view(page), title: 'Not found', body: notFoundBody('subject') }, 404)
  const signed = frozenBy(await samplesOf(c, page, subject.id))
  const form = await subjectForm(c, page, {
    action: `${b}/subjects/${subject.id}/edit`,
    values: again?.values ?? valuesOf(subject),
    errors: again?.errors ?? {},
    submit: 'Save',
    frozenBy: signed,
  })
  const crumbs = [
    { href: `${b}/subjects`, text: 'Subjects' },
    { href: `${b}/subjects/${subject.id}`, text: subject.external_id },
  ]
  return formPage(c, { ...view(page), crumbs }, `Edit subject ${subject.external_id}`, form, again?.status)
}

/** The new-subject form, empty or as it was posted with the refusal beside its fields. */
async function newSubjectPage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  values: SubjectValues,
  again?: { errors: FieldErrors; status: FormStatus },
): Promise<Response> {
  const b = base(c, page)
  const form = await subjectForm(c, page, { action: `${b}/subjects`, values, errors: again?.errors ?? {}, submit: 'Create subject' })
  return formPage(c, { ...view(page), crumbs: [{ href: `${b}/subjects`, text: 'Subjects' }] }, 'New subject', form, again?.status)
}

export function sampleTable(b: string, samples: readonly SampleRecord[], caption: string): Raw {
  return html`<div class="table-wrap">
    <table class="samples">
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">Sample</th>
          <th scope="col">Type</th>
          <th scope="col">FASTQ files</th>
          <th scope="col">Orders</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        ${
          samples.length
            ? samples.map(
                (s) =>
                  html`<tr>
                    <td><a href="${b}/samples/${s.id}">${s.external_id}</a></td>
                    <td>${s.type}</td>
                    <td>${s.fastq.length}</td>
                    <td>${s.orders.map((o) => html`<a href="${b}/orders/${o.order_id}">${o.accession}</a> `)}</td>
                    <td>${frozenBy([s]).length ? badge('frozen', 'info') : badge('editable', 'neutral')}</td>
                  </tr>`,
              )
            : html`<tr>
                <td colspan="5">No samples yet.</td>
              </tr>`
        }
      </tbody>
    </table>
  </div>`
}

/** A family drawn and, for every reader, tabulated. */
function pedigree(b: string, familyId: string, members: readonly SubjectRecord[], current?: string): Raw {
  const byId = new Map(members.map((m) => [m.id, m]))
  const name = (id: string | undefined) => (id ? (byId.get(id)?.external_id ?? 'outside the family') : '—')
  return html`<figure class="pedigree">
      <div class="table-wrap">${pedigreeSvg(familyId, members, current)}</div>
      <figcaption class="muted">
        Squares: male; circles: female; diamonds: sex unknown or other. Filled: affected; open: unaffected; ?: status unknown.
      </figcaption>
    </figure>
    <div class="table-wrap">
      <table class="pedigree-table">
        <caption>
          Members of family ${familyId}
        </caption>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            <th scope="col">Sex</th>
            <th scope="col">Affected</th>
            <th scope="col">Mother</th>
            <th scope="col">Father</th>
            <th scope="col">Samples</th>
          </tr>
        </thead>
        <tbody>
          ${members.map(
            (m) => html`<tr${m.id === current ? html` aria-current="true"` : ''}>
              <td><a href="${b}/subjects/${m.id}">${m.external_id}</a>${m.display_name ? ` (${m.display_name})` : ''}</td>
              <td>${m.sex}</td>
              <td>${affectedBadge(m)}</td>
              <td>${name(m.mother_id)}</td>
              <td>${name(m.father_id)}</td>
              <td>${m.sample_count}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`
}

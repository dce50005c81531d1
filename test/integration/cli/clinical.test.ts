import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Order, OrderLabflow, Sample, SampleInfo, Subject } from '../../../cli/client.js'
import { SettingsStore } from '../../../cli/settings.js'
import { rand } from '../../support/world.js'
import { configHome, parseJson, runCli, startPlatform } from '../../support/cli.js'

interface List<T> {
  items: T[]
  next_page_token: string | null
}

/** `platform subjects|samples|orders …` as a child process against the clinical-data service on a real port, as a lab member. */
describe('platform subjects, samples and orders', async () => {
  const platform = await startPlatform()
  const { world } = platform
  afterAll(() => platform.stop())

  async function homeFor(token: string) {
    const home = await configHome(platform, world.project.id)
    new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: token, saved_at: new Date().toISOString() })
    return home
  }
  const labMember = await world.caller(['lab'])
  const lab = await homeFor(labMember.token)
  const admin = await homeFor((await world.caller(['admin'])).token)
  const viewer = await homeFor((await world.caller(['viewer'])).token)
  const cli = (args: string[], home = lab) => runCli(args, { configDir: home })
  async function ok<T>(args: string[], home = lab): Promise<T> {
    const res = await cli([...args, '--json'], home)
    expect(res.code, res.stderr).toBe(0)
    return parseJson<T>(res)
  }

  const bucket = world.project.bucket_name
  const fastq = (name: string) => ['--fastq', `gs://${bucket}/fastq/${name}_R1.fastq.gz`, '--fastq', `gs://${bucket}/fastq/${name}_R2.fastq.gz`]
  const family = `FAM-${rand()}`
  const ids = { mother: `P-${rand()}-M`, father: `P-${rand()}-F`, proband: `P-${rand()}` }
  const tubes = { mother: `S-${rand()}-M`, father: `S-${rand()}-F`, proband: `S-${rand()}-P` }

  /** A trio registered with the CLI: subjects by external id, parents named by theirs, a sample each. */
  async function registerTrio() {
    const mother = await ok<Subject>(['subjects', 'create', ids.mother, '--sex', 'female', '--family', family])
    const father = await ok<Subject>(['subjects', 'create', ids.father, '--sex', 'male', '--family', family, '--affected-status', 'unaffected'])
    const proband = await ok<Subject>([
      'subjects',
      'create',
      ids.proband,
      '--name',
      'Proband, Demo',
      '--sex',
      'male',
      '--affected-status',
      'affected',
      '--birth-date',
      '2019-04-02',
      '--phenotype',
      'HP:0001250',
      '--phenotype',
      'HP:0001263',
      '--family',
      family,
      '--mother',
      ids.mother,
      '--father',
      father.id,
    ])
    const samples: Record<keyof typeof tubes, Sample> = {
      mother: await ok<Sample>(['samples', 'create', tubes.mother, '--subject', ids.mother, '--type', 'blood', ...fastq(tubes.mother)]),
      father: await ok<Sample>(['samples', 'create', tubes.father, '--subject', ids.father, '--type', 'saliva', ...fastq(tubes.father)]),
      proband: await ok<Sample>([
        'samples',
        'create',
        tubes.proband,
        '--subject',
        proband.id,
        '--type',
        'blood',
        '--collected-at',
        '2026-11-20',
        ...fastq(tubes.proband),
      ]),
    }
    return { subjects: { mother, father, proband }, samples }
  }
  const trio = await registerTrio()

  describe('subjects', () => {
    it('creates subjects with their pedigree, the parents named by external id or id', () => {
      expect(trio.subjects.proband).toMatchObject({
        external_id: ids.proband,
        display_name: 'Proband, Demo',
        sex: 'male',
        affected_status: 'affected',
        birth_date: '2019-04-02',
        phenotypes: ['HP:0001250', 'HP:0001263'],
        family_id: family,
        mother_id: trio.subjects.mother.id,
        father_id: trio.subjects.father.id,
      })
    })

    it('shows a subject by external id as label and value lines, and the same subject by id', async () => {
      const res = await cli(['subjects', 'show', ids.proband])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toMatch(new RegExp(`^external id\\s+${ids.proband}$`, 'm'))
      expect(res.stdout).toMatch(/^phenotypes\s+HP:0001250, HP:0001263$/m)
      expect(res.stdout).toMatch(new RegExp(`^mother\\s+${ids.mother} \\(${trio.subjects.mother.id}\\)$`, 'm'))
      expect(await ok<Subject>(['subjects', 'show', trio.subjects.proband.id])).toEqual(await ok<Subject>(['subjects', 'show', ids.proband]))
    })

    it("lists a family's subjects as a table, newest first, and as csv with chosen fields", async () => {
      const res = await cli(['subjects', 'list', '--family', family])
      expect(res.code, res.stderr).toBe(0)
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).toMatch(/^ID\s+EXTERNAL ID\s+NAME\s+SEX\s+AFFECTED\s+FAMILY\s+SAMPLES\s+CREATED$/)
      expect(lines.slice(1).map((l) => l.split(/\s+/)[1])).toEqual([ids.proband, ids.father, ids.mother])
      const csv = await cli([
        'subjects',
        'list',
        '--family',
        family,
        '--affected-status',
        'affected',
        '--format',
        'csv(external_id,sex,sample_count)',
      ])
      expect(csv.stdout).toBe(`external_id,sex,sample_count\n${ids.proband},male,1\n`)
    })

    it('pages with --limit: the note says the command that continues, which lists the rest', async () => {
      const first = await cli(['subjects', 'list', '--family', family, '--limit', '2', '--format', 'csv(external_id)'])
      expect(first.stdout.trim().split('\n').slice(1)).toEqual([ids.proband, ids.father])
      const next = /More subjects exist: platform (subjects list --family \S+ --limit 2 --page-token \S+)/.exec(first.stderr)
      expect(next, first.stderr).not.toBeNull()
      const rest = await cli([...next![1]!.split(' '), '--format', 'csv(external_id)'])
      expect(rest.stdout.trim().split('\n').slice(1)).toEqual([ids.mother])
      const all = await ok<List<Subject>>(['subjects', 'list', '--family', family, '--all'])
      expect(all.items).toHaveLength(3)
      expect(all.next_page_token).toBeNull()
    })

    it('edits only the fields given; --clear removes one', async () => {
      const edited = await ok<Subject>([
        'subjects',
        'edit',
        ids.proband,
        '--name',
        'Proband, D.',
        '--clear',
        'birth-date',
        '--phenotype',
        'HP:0001250',
      ])
      expect(edited).toMatchObject({ display_name: 'Proband, D.', phenotypes: ['HP:0001250'], sex: 'male', family_id: family })
      expect(edited.birth_date).toBeUndefined()
    })

    it('refuses an edit that changes nothing, and a field both set and cleared, before calling the service (exit 3)', async () => {
      const none = await cli(['subjects', 'edit', ids.proband])
      expect(none.code).toBe(3)
      expect(none.stderr).toContain('nothing to change')
      const both = await cli(['subjects', 'edit', ids.proband, '--family', 'F-2', '--clear', 'family'])
      expect(both.code).toBe(3)
    })

    it('says an unknown subject is not found (exit 6) and a taken external id is rejected (exit 7)', async () => {
      const missing = await cli(['subjects', 'show', 'P-NO-SUCH'])
      expect(missing.code).toBe(6)
      expect(missing.stderr).toBe(
        "platform: not found: no subject with id or external id 'P-NO-SUCH' in this project (platform subjects list shows them)\n",
      )
      const taken = await cli(['subjects', 'create', ids.mother])
      expect(taken.code).toBe(7)
      expect(taken.stderr).toContain(ids.mother)
    })

    it('refuses a viewer a write (exit 5) but shows it the subject', async () => {
      expect((await cli(['subjects', 'create', `P-${rand()}`], viewer)).code).toBe(5)
      expect((await cli(['subjects', 'show', ids.proband], viewer)).code).toBe(0)
    })
  })

  describe('samples', () => {
    it("lists a subject's samples, the subject named by external id", async () => {
      const list = await ok<List<Sample>>(['samples', 'list', '--subject', ids.proband])
      expect(list.items.map((s) => s.external_id)).toEqual([tubes.proband])
      const res = await cli(['samples', 'list', '--subject', ids.father, '--type', 'saliva'])
      expect(res.stdout).toMatch(/^ID\s+EXTERNAL ID\s+TYPE\s+SUBJECT\s+FASTQ\s+ORDERS\s+CREATED$/m)
      expect(res.stdout).toContain(tubes.father)
    })

    it('shows a sample by external id, and --info gives its samplesheet row as a pipeline reads it', async () => {
      const res = await cli(['samples', 'show', tubes.proband])
      expect(res.stdout).toMatch(new RegExp(`^subject\\s+${ids.proband} \\(${trio.subjects.proband.id}\\)$`, 'm'))
      expect(res.stdout).toMatch(/^collected\s+2026-11-20T00:00:00Z$/m)
      const info = await ok<SampleInfo>(['samples', 'show', tubes.proband, '--info'])
      expect(info).toMatchObject({
        sample: tubes.proband,
        sex: 1,
        phenotype: 2,
        maternal_id: tubes.mother,
        paternal_id: tubes.father,
        case_id: family,
      })
    })

    it('edits a sample: a time, a file cleared, the FASTQ list replaced', async () => {
      const extra = `S-${rand()}`
      await ok<Sample>(['samples', 'create', extra, '--subject', ids.mother, '--type', 'dna', '--cram', `gs://${bucket}/cram/${extra}.cram`])
      const edited = await ok<Sample>(['samples', 'edit', extra, '--received-at', '2026-11-21T08:00:00Z', '--clear', 'cram', ...fastq(extra)])
      expect(edited).toMatchObject({
        received_at: '2026-11-21T08:00:00.000Z',
        fastq: [`gs://${bucket}/fastq/${extra}_R1.fastq.gz`, `gs://${bucket}/fastq/${extra}_R2.fastq.gz`],
      })
      expect(edited.cram).toBeUndefined()
    })

    it('asks for the subject and the type of a new sample (exit 3), and names a bad data URI (exit 7)', async () => {
      expect((await cli(['samples', 'create', `S-${rand()}`, '--type', 'blood'])).code).toBe(3)
      expect((await cli(['samples', 'create', `S-${rand()}`, '--subject', ids.mother])).code).toBe(3)
      const bad = await cli(['samples', 'create', `S-${rand()}`, '--subject', ids.mother, '--type', 'blood', '--vcf', 'gs://elsewhere/x.vcf'])
      expect(bad.code).toBe(7)
      expect(bad.stderr).toContain('vcf')
    })
  })

  describe('orders', () => {
    // One trio order, step by step: each step starts where the one before left it.
    let order: Order

    it('creates a draft order with samples named by external id, then adds, removes and re-adds one', async () => {
      // Create with two samples named by external id; add the third; remove and add one again.
      order = await ok<Order>([
        'orders',
        'create',
        '--test-code',
        'WGS-trio',
        '--priority',
        'urgent',
        '--indication',
        'Seizures',
        '--requester',
        'Dr. Ada Lovelace',
        '--requester-org',
        "Children's Hospital",
        '--sample',
        `${tubes.proband}=proband`,
        '--sample',
        `${tubes.mother}=mother`,
      ])
      expect(order).toMatchObject({
        status: 'draft',
        priority: 'urgent',
        requester: { name: 'Dr. Ada Lovelace', organization: "Children's Hospital" },
      })
      expect(order.accession).toMatch(/^ORD-\d{4}-\d{6}$/)
      const added = await cli(['orders', 'add-sample', order.accession, tubes.father, '--role', 'father'])
      expect(added.code, added.stderr).toBe(0)
      expect(added.stdout).toBe(`Added sample ${tubes.father} to order ${order.accession} as father.\n`)
      const removed = await cli(['orders', 'remove-sample', order.accession, tubes.mother])
      expect(removed.stdout).toBe(`Removed sample ${tubes.mother} from order ${order.accession}.\n`)
      await ok(['orders', 'add-sample', order.accession, trio.samples.mother.id, '--role', 'mother'])
    })

    it('shows the order with what this caller may do next and its samples in their roles', async () => {
      const shown = await cli(['orders', 'show', order.accession])
      expect(shown.stdout).toMatch(/^status\s+draft$/m)
      // What this caller may do now: a lab member signs; cancelling is an admin's.
      expect(shown.stdout).toMatch(/^next\s+signed$/m)
      expect(shown.stdout).toMatch(new RegExp(`SAMPLES\\nROLE\\s+SAMPLE\\s+TYPE\\s+SUBJECT\\s+FASTQ\\n(.*\\n)*proband\\s+${tubes.proband}\\s+blood`))
    })

    it('signs the order with the verb a lab uses', async () => {
      const signed = await cli(['orders', 'transition', order.accession, 'sign'])
      expect(signed.code, signed.stderr).toBe(0)
      expect(signed.stdout).toContain(`Order ${order.accession}: draft → signed.`)
    })

    it('prints the samplesheet as the service writes it, or writes it to a file it does not overwrite unasked', async () => {
      // The samplesheet as the service writes it, to stdout and to a file.
      const sheet = await cli(['orders', 'samplesheet', order.accession])
      expect(sheet.code, sheet.stderr).toBe(0)
      const [header, ...rows] = sheet.stdout.trimEnd().split('\n')
      expect(header).toBe('sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id')
      expect(rows).toContainEqual(
        `${tubes.proband},1,gs://${bucket}/fastq/${tubes.proband}_R1.fastq.gz,gs://${bucket}/fastq/${tubes.proband}_R2.fastq.gz,1,2,${tubes.father},${tubes.mother},${order.accession}`,
      )
      const dir = await mkdtemp(join(tmpdir(), 'samplesheet-'))
      const file = join(dir, 'samplesheet.csv')
      const written = await cli(['orders', 'samplesheet', order.accession, '-o', file])
      expect(written.code, written.stderr).toBe(0)
      expect(written.stderr).toContain('3 rows')
      expect(await readFile(file, 'utf8')).toBe(sheet.stdout)
      await writeFile(file, 'mine')
      const refused = await cli(['orders', 'samplesheet', order.accession, '-o', file])
      expect(refused.code).toBe(3)
      expect(await readFile(file, 'utf8')).toBe('mine')
      expect((await cli(['orders', 'samplesheet', order.accession, '-o', file, '--overwrite'])).code).toBe(0)
      expect(await readFile(file, 'utf8')).toBe(sheet.stdout)
    })

    it('keeps what signing froze: the samples, their roles, the sample itself and the order but its assignee and due date', async () => {
      // Signed: the samples and their roles are frozen, and so is the sample itself.
      const frozen = await cli(['orders', 'remove-sample', order.accession, tubes.father])
      expect(frozen.code).toBe(7)
      const sample = await cli(['samples', 'edit', tubes.father, '--type', 'blood'])
      expect(sample.code).toBe(7)
      expect(sample.stderr).toContain(order.accession)
      const priority = await cli(['orders', 'edit', order.accession, '--priority', 'stat'])
      expect(priority.code).toBe(7)
      expect((await ok<Order>(['orders', 'edit', order.accession, '--due-date', '2026-12-20'])).due_date).toBe('2026-12-20')
    })

    it('puts the order on hold only with a reason, and resumes it to the status it left', async () => {
      // On hold needs a reason (the service's 400, exit 7); resume goes back to where it was.
      const noReason = await cli(['orders', 'transition', order.accession, 'hold'])
      expect(noReason.code).toBe(7)
      expect(noReason.stderr).toContain('reason')
      expect((await ok<Order>(['orders', 'transition', order.accession, 'hold', '--reason', 'awaiting a new sample'])).status).toBe('on_hold')
      expect((await ok<Order>(['orders', 'transition', order.accession, 'resume'])).status).toBe('signed')
    })

    it("shows the order's labflow stage and the transitions it may take, and takes one", async () => {
      // The labflow: where it is, and a move along it.
      const flow = await ok<OrderLabflow>(['orders', 'labflow', order.accession])
      expect(flow).toMatchObject({ status: 'active', stage: { key: 'accessioning' } })
      const table = await cli(['orders', 'labflow', order.accession])
      expect(table.stdout).toMatch(/TRANSITIONS YOU MAY TAKE\nTRANSITION\s+KIND\s+TO\s+REASON\nadvance-accessioning\s+advance\s+extraction/)
      const moved = await ok<OrderLabflow>(['orders', 'labflow', order.accession, '--take', 'advance-accessioning'])
      expect(moved.stage?.key).toBe('extraction')
    })

    it('lists the order among the signed ones, and shows it by id as by accession', async () => {})

    it('assigns the order to the caller with --assignee me, and lists the orders assigned to it', async () => {
      expect((await ok<Order>(['orders', 'edit', order.accession, '--assignee', 'me'])).assignee).toBe(labMember.user.id)
      const mine = await ok<List<Order>>(['orders', 'list', '--assignee', 'me', '--all'])
      expect(mine.items.map((o) => o.accession)).toEqual([order.accession])
    })

    it('deletes a draft order once confirmed, and refuses to delete a signed one (exit 7: cancel it)', async () => {
      const draft = await ok<Order>(['orders', 'create', '--test-code', 'WES-single'])
      const unconfirmed = await cli(['orders', 'delete', draft.accession])
      expect(unconfirmed.code).toBe(3)
      expect(unconfirmed.stderr).toContain('pass --yes')
      expect(await ok(['orders', 'delete', draft.accession, '--yes'])).toEqual({ id: draft.id, accession: draft.accession, deleted: true })
      expect((await cli(['orders', 'show', draft.accession])).code).toBe(6)
      expect((await cli(['orders', 'delete', order.accession, '--yes'])).code).toBe(7)
    })

    it('keeps the samples of a signed order and their subjects from deletion (exit 7), and deletes others with their samples', async () => {
      expect((await cli(['samples', 'delete', tubes.proband, '--yes'])).code).toBe(7)
      const held = await cli(['subjects', 'delete', ids.proband, '--yes'])
      expect(held.code).toBe(7)
      expect(held.stderr).toContain(order.accession)
      const loner = `P-${rand()}`
      await ok<Subject>(['subjects', 'create', loner])
      await ok<Sample>(['samples', 'create', `${loner}-B1`, '--subject', loner, '--type', 'blood'])
      await ok<Sample>(['samples', 'create', `${loner}-B2`, '--subject', loner, '--type', 'dna'])
      expect((await cli(['samples', 'delete', `${loner}-B2`, '--yes'])).stdout).toBe(`Deleted sample ${loner}-B2.\n`)
      const deleted = await cli(['subjects', 'delete', loner, '--yes'])
      expect(deleted.stdout).toBe(`Deleted subject ${loner} and its 1 sample.\n`)
      expect((await cli(['samples', 'show', `${loner}-B1`])).code).toBe(6)
    })

    it('refuses a move off the edges naming the allowed ones (exit 7), and a word that is no move (exit 3)', async () => {
      const order = await ok<Order>(['orders', 'create', '--test-code', 'WES-single', '--sample', `${tubes.proband}=proband`])
      const offEdge = await cli(['orders', 'transition', order.accession, 'completed'])
      expect(offEdge.code).toBe(7)
      expect(offEdge.stderr).toContain(`cannot move order ${order.accession} from draft to completed`)
      const word = await cli(['orders', 'transition', order.accession, 'approve'])
      expect(word.code).toBe(3)
      expect(word.stderr).toContain('sign, start, review')
      const notHeld = await cli(['orders', 'transition', order.accession, 'resume'])
      expect(notHeld.code).toBe(3)
    })

    it("refuses a lab member a cancel (exit 5), a project admin's role", async () => {
      const order = await ok<Order>(['orders', 'create', '--test-code', 'WES-single'])
      const cancel = await cli(['orders', 'transition', order.accession, 'cancel', '--reason', 'duplicate'])
      expect(cancel.code).toBe(5)
      expect((await ok<Order>(['orders', 'transition', order.accession, 'cancel', '--reason', 'duplicate'], admin)).status).toBe('cancelled')
    })

    it('says an unknown order is not found (exit 6)', async () => {
      const order = await cli(['orders', 'show', 'ORD-1999-000001'])
      expect(order.code).toBe(6)
      expect(order.stderr).toContain("no order with id or accession 'ORD-1999-000001'")
    })

    it('says an unknown sample is not found (exit 6), and checks a role before sending (exit 3)', async () => {
      const draft = await ok<Order>(['orders', 'create', '--test-code', 'WES-single'])
      const sample = await cli(['orders', 'add-sample', draft.accession, 'S-NO-SUCH', '--role', 'proband'])
      expect(sample.code).toBe(6)
      expect(sample.stderr).toContain("no sample with id or external id 'S-NO-SUCH'")
      expect((await cli(['orders', 'add-sample', draft.accession, tubes.proband, '--role', 'aunt'])).code).toBe(3)
      expect((await cli(['orders', 'create', '--test-code', 'X', '--sample', `${tubes.proband}:proband`])).code).toBe(3)
    })
  })
})

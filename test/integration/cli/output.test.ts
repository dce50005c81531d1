import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import type { Pipeline, Run } from '../../../cli/client.js'
import { displayWidth } from '../../../cli/format.js'
import { SettingsStore } from '../../../cli/settings.js'
import { configHome, parseJson, repoRoot, runCli, runMain, startCliOnTerminal, startPlatform } from '../../support/cli.js'

const { version } = JSON.parse(readFileSync(join(repoRoot, 'cli/package.json'), 'utf8')) as { version: string }

describe('platform output: version, formats, colour and width', async () => {
  const platform = await startPlatform()
  const { world } = platform
  afterAll(() => platform.stop())

  const analyst = await world.caller(['analyst'])
  const home = await configHome(platform, world.project.id)
  new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: analyst.token, saved_at: new Date().toISOString() })
  const cli = (args: string[]) => runMain(args, { configDir: home })

  const submitted = parseJson<Run>(await cli(['runs', 'submit', 'hello-local', '--json']))
  await platform.compute.runs.applyJobState(submitted.id, { status: 'failed', at: new Date(), source: 'test', error_message: 'boom' })

  describe('--version', () => {
    it.each([['--version'], ['-V'], ['--profile', 'staging', '--version']])(
      'prints the version of cli/package.json for %j and exits 0',
      async (...args) => {
        const res = await runCli(args, { configDir: home })
        expect(res.code).toBe(0)
        expect(res.stdout).toBe(`${version}\n`)
      },
    )

    it("leaves a subcommand's own --version to it: pipelines show <slug> --version names the pipeline's version", async () => {
      const latest = parseJson<Pipeline>(await cli(['pipelines', 'show', 'hello-local', '--json']))
      const res = await cli(['pipelines', 'show', 'hello-local', '--version', latest.version, '--json'])
      expect(res.code, res.stderr).toBe(0)
      expect(parseJson<Pipeline>(res).id).toBe(latest.id)
    })

    it('lists -V, --version in the root help', async () => {
      expect((await cli(['--help'])).stdout).toMatch(/-V, --version\s+print the CLI version/)
    })
  })

  describe('--format', () => {
    it('prints the whole listing as YAML with --format yaml', async () => {
      const res = await cli(['runs', 'list', '--format', 'yaml'])
      expect(res.code, res.stderr).toBe(0)
      const doc = parseYaml(res.stdout) as { items: Run[]; next_page_token: string | null }
      expect(doc.items.map((r) => r.id)).toContain(submitted.id)
      expect(doc).toHaveProperty('next_page_token')
    })

    it('prints the chosen fields as csv, table or json', async () => {
      const csv = await cli(['runs', 'list', '--format', 'csv(id,status,pipeline_slug)'])
      expect(csv.stdout.split('\n')[0]).toBe('id,status,pipeline_slug')
      expect(csv.stdout).toContain(`${submitted.id},failed,hello-local\n`)

      const table = await cli(['runs', 'status', submitted.id, '--format', 'table(id,status,error_message)'])
      expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+ERROR_MESSAGE$/)
      expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${submitted.id}\\s+failed\\s+boom$`))

      const json = await cli(['runs', 'status', submitted.id, '--format', 'json(id,status)'])
      expect(parseJson(json)).toEqual({ id: submitted.id, status: 'failed' })
    })

    it('prints a watch as one YAML document per status change with --format yaml', async () => {
      const res = await cli(['runs', 'watch', submitted.id, '--format', 'yaml'])
      expect(res.code).toBe(1)
      const docs = res.stdout.split(/^---\n/m).filter(Boolean)
      expect(docs.map((d) => (parseYaml(d) as Run).status)).toEqual(['failed'])
    })

    it('refuses an unknown format, and --format with --json, as usage errors (exit 3)', async () => {
      expect((await cli(['runs', 'list', '--format', 'xml'])).code).toBe(3)
      expect((await cli(['runs', 'list', '--format', 'yaml', '--json'])).code).toBe(3)
    })

    it('keeps --json as the same as --format json', async () => {
      const [a, b] = await Promise.all([cli(['pipelines', 'list', '--json']), cli(['pipelines', 'list', '--format', 'json'])])
      expect(a.stdout).toBe(b.stdout)
    })
  })

  describe('on a terminal', () => {
    const onTerminal = (args: string[], env: Record<string, string> = {}) =>
      startCliOnTerminal(['runs', 'list', ...args], { configDir: home, env, columns: 100 }).exited

    it('colours the status column', async () => {
      const res = await onTerminal([])
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('\x1b[31mfailed\x1b[39m')
    })

    it.each<[string, string[], Record<string, string>]>([
      ['NO_COLOR set, even empty', [], { NO_COLOR: '' }],
      ['--no-color', ['--no-color'], {}],
    ])('prints no colour with %s', async (_, args, env) => {
      const res = await onTerminal(args, env)
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('failed')
      expect(res.stdout).not.toContain('\x1b[3')
    })

    it("fits the table to the terminal's width, cutting the run name with … and never the id", async () => {
      const res = await onTerminal(['--no-color'])
      const lines = stripVTControlCharacters(res.stdout).replace(/\r/g, '').trim().split('\n')
      for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(100)
      const row = lines.find((l) => l.startsWith(submitted.id))
      expect(row).toMatch(/^\S{36}\s+hello-lo\S*…/)
    })

    it('prints no colour and cuts nothing when stdout is not a terminal', async () => {
      const res = await runCli(['runs', 'list'], { configDir: home })
      expect(res.stdout).not.toContain('\x1b[')
      expect(res.stdout).toContain(submitted.name)
    })
  })
})

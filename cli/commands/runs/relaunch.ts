import { randomUUID } from 'node:crypto'
import type { Command } from 'commander'
import type { RelaunchRun } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { examples } from '../../help.js'
import { fields } from '../../format.js'
import { paramsFromFlags } from '../../params.js'
import { DEFAULT_INTERVAL_S, interval, watchRun } from './watch.js'

interface RelaunchOptions {
  resume?: boolean
  param: string[]
  tag: string[]
  profileName?: string
  idempotencyKey?: string
  watch?: boolean
  interval: number
}

const collect = (value: string, previous: string[]) => [...previous, value]

export function register(runs: Command, cli: Cli) {
  runs
    .command('relaunch')
    .description(
      "Relaunch a run with every setting of the first (params, tags, profile, order), some changed; --resume reuses the first run's completed work",
    )
    .argument('<run>', 'run id or name')
    .option('--resume', "continue the first run's work session: completed tasks are not run again (Nextflow -resume, Cromwell call caching)")
    .option('--param <key=value>', 'change a parameter; repeat for more. key:=JSON for a JSON value, key:=null removes it', collect, [])
    .option('--tag <tag>', "the new run's tags instead of the first run's; repeat for more", collect, [])
    .option('--profile-name <name>', "the pipeline's execution profile instead of the first run's")
    .option(
      '--idempotency-key <key>',
      'reuse a key to make a repeated relaunch return the first relaunch instead of a second one (default: a new key)',
    )
    .option('--watch', 'then watch the new run to its end, with the exit codes of runs watch (0 succeeded, 1 failed, 2 cancelled)')
    .option('--interval <seconds>', 'with --watch: seconds between polls', interval, DEFAULT_INTERVAL_S)
    .addHelpText(
      'after',
      examples(
        'platform runs relaunch steps-local-20261126T140000Z --resume --param fail_at:=null --watch',
        'platform runs relaunch 5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11 --param greeting=bonjour --tag rerun',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<RelaunchOptions>()
        const client = session.client()
        const project = await session.projectId(client)
        const first = await session.run(client, project, ref)
        // The pipeline's inputs type the changed params as a submission's are (an integer input takes --param n=3).
        const inputs = opts.param.length ? ((await session.pipeline(client, project, first.pipeline_id)).inputs ?? []) : []
        const body: RelaunchRun = {
          resume: opts.resume === true,
          ...(opts.param.length ? { params: paramsFromFlags(inputs, opts.param) } : {}),
          ...(opts.tag.length ? { tags: opts.tag } : {}),
          ...(opts.profileName ? { profile: opts.profileName } : {}),
        }
        const run = await client.relaunchRun(project, first.id, body, opts.idempotencyKey ?? randomUUID())
        if (opts.watch && session.out.structured) return watchRun(session, run.id, opts.interval)
        session.out.result(run, () =>
          fields([
            ['id', run.id],
            ['name', run.name],
            ['status', session.out.paint(run.status)],
            ['relaunched from', `${first.name}${body.resume ? ' (resumed)' : ''}`],
          ]),
        )
        if (opts.watch) return watchRun(session, run.id, opts.interval)
        if (session.out.human) session.out.note(`Follow it with: platform runs watch ${run.id}`)
      }),
    )
}

import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { CliError, EXIT, usageError } from './errors.js'

/** The CLI's streams: the process's own, or in tests streams that say whether they are a terminal. */
export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  /** `columns`: the terminal's width, when it is one. */
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
}

export const isInteractive = (io: Io) => Boolean(io.stdin.isTTY)

/**
 * Asks one question on the terminal. Prompts go to stderr so that stdout holds only results.
 * Ctrl-C (the terminal is in raw mode while asking, so it arrives as a key, not as a signal) ends
 * the command with exit code 130; the end of the input (Ctrl-D) with 3: there is no answer.
 */
function ask(io: Io, question: string, hidden: boolean): Promise<string> {
  let muted = false
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) io.stderr.write(chunk)
      done()
    },
  })
  const rl = createInterface({ input: io.stdin, output, terminal: true })
  return new Promise<string>((resolve, reject) => {
    // Set before rl.close(), whose 'close' event fires at once: it must not take an answer or a Ctrl-C for the end of the input.
    let settled = false
    rl.on('SIGINT', () => {
      settled = true
      rl.close()
      io.stderr.write('\n')
      reject(new CliError('interrupted', EXIT.interrupted))
    })
    rl.on('close', () => {
      if (!settled) reject(new CliError('no answer (end of input)', EXIT.usage))
    })
    rl.question(question, (answer) => {
      settled = true
      rl.close()
      if (hidden) io.stderr.write('\n')
      resolve(answer)
    })
    // After the prompt is written: what the user types next is not echoed.
    muted = hidden
  })
}

export const askLine = (io: Io, question: string) => ask(io, question, false)
export const askSecret = (io: Io, question: string) => ask(io, question, true)

/** What a command that changes something for good (a cancel, a delete) asks first. */
export interface Confirmation {
  /** --yes was given: nothing is asked. */
  yes?: boolean
  /** What the command does to it. */
  verb: 'cancel' | 'delete'
  /** What it is done to, as the person knows it: "run hello-local-…", "gs://bucket/a.txt". */
  thing: string
  /** Said in the question only, after the thing: " (draft)", " and its 2 samples". */
  detail?: string
}

const DONE: Record<Confirmation['verb'], string> = { cancel: 'cancelled', delete: 'deleted' }

/**
 * Asks "[y/N]" unless --yes was given: only an explicit yes goes on. Without a terminal to ask on
 * (a script) and without --yes, and when the answer is anything but yes, the command ends with
 * exit code 3, so that a script never mistakes a declined change for a done one; Ctrl-C with 130.
 */
export async function confirmOrStop(io: Io, { yes, verb, thing, detail = '' }: Confirmation): Promise<void> {
  if (yes) return
  if (!isInteractive(io)) throw usageError(`refusing to ${verb} ${thing} without confirmation: stdin is not a terminal; pass --yes`)
  // "Cancel run hello-local-…? [y/N] ", "Delete subject F-001 and its 2 samples? [y/N] "
  const answer = await askLine(io, `${verb[0]!.toUpperCase()}${verb.slice(1)} ${thing}${detail}? [y/N] `)
  if (!/^(y|yes)$/i.test(answer.trim())) throw usageError(`${thing} was not ${DONE[verb]}`)
}

/** All of stdin, without the final line break (for --token-stdin, --password-stdin, --params-file -). */
export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

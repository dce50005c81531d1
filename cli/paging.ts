import { InvalidArgumentError, Option, type Command } from 'commander'

/** The paging options of a listing command (`runs list`, `files ls`, `audit events`): --limit, --all, --page-token. */
export interface PagingOptions {
  limit: number
  all?: boolean
  pageToken?: string
}

export function positiveInteger(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('expected a positive integer')
  return n
}

/** Adds --limit (default `defaultLimit`), --all and --page-token to a listing of `items` (one `item`). */
export function pagingOptions(command: Command, items: string, item: string, defaultLimit: number): Command {
  return command
    .option('--limit <n>', `at most this many ${items}`, positiveInteger, defaultLimit)
    .addOption(new Option('--all', `every ${item} (all pages), however many`).conflicts('limit'))
    .option('--page-token <token>', 'continue where a previous listing with the same filters stopped')
}

/** A word as the shell reads it back: quoted when it holds anything but safe characters. */
export const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/**
 * The command that continues a listing where this page stopped: the same words and filters (a page
 * token is only valid with the filters it was made with), --limit when not the default, the token.
 */
export function nextCommand(words: string[], opts: PagingOptions, defaultLimit: number, token: string): string {
  const all = [...words]
  if (opts.limit !== defaultLimit) all.push('--limit', String(opts.limit))
  all.push('--page-token', token)
  return ['platform', ...all].map(shellWord).join(' ')
}

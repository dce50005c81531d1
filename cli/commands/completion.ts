import { Argument, type Command, type Option } from 'commander'
import { action, type Cli } from '../context.js'
import { examples } from '../help.js'

/**
 * `platform completion bash|zsh|fish`: a completion script made from the program's own command
 * tree, so that it names every command, option and choice of this version of the CLI.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

interface Node {
  /** Words after `platform`: '' for the root, 'runs submit' for a subcommand. */
  path: string
  command: Command
}

interface Word {
  word: string
  description: string
}

function nodesOf(command: Command, prefix: string[] = []): Node[] {
  const own = { path: prefix.join(' '), command }
  return [own, ...command.commands.flatMap((sub) => nodesOf(sub, [...prefix, sub.name()]))]
}

const visible = (options: readonly Option[]) => options.filter((o) => !o.hidden)
const takesValue = (o: Option) => o.required || o.optional
const names = (o: Option) => [o.long, o.short].filter((n): n is string => Boolean(n))
/** A file is completed for an option whose value is one (`--params-file <file.json>`). */
const wantsFile = (o: Option) => /<[^>]*file[^>]*>/i.test(o.flags)
const firstLine = (text: string) => text.split('\n')[0]!.trim()

const HELP: Word = { word: '--help', description: 'show help for the command' }

/** What may follow a command: its subcommands, the choices of its first argument, its options and the root's. */
function wordsAt(node: Node, root: Command): Word[] {
  const commands = node.command.commands.map((c) => ({ word: c.name(), description: firstLine(c.description()) }))
  const choices = (node.command.registeredArguments[0] as Argument | undefined)?.argChoices ?? []
  const options = [...visible(node.command.options), ...(node.command === root ? [] : visible(root.options))]
  return [
    ...commands,
    ...choices.map((word) => ({ word, description: '' })),
    ...options.flatMap((o) => names(o).map((word) => ({ word, description: firstLine(o.description) }))),
    HELP,
  ]
}

/**
 * The `case` branches that complete an option's value, keyed by `<command path>|<flag>`: an option
 * of one name may take other values in another command (`runs list --status` a run's status,
 * `reports list --status` a report's). The root's options apply under every command, after the
 * commands' own.
 */
function valueCases(root: Command, reply: (o: Option) => string): string[] {
  const own: string[] = []
  const global: string[] = []
  for (const node of nodesOf(root)) {
    const pattern = (flag: string) => (node.command === root ? `*${quote(`|${flag}`)}` : quote(`${node.path}|${flag}`))
    for (const o of visible(node.command.options).filter(takesValue)) {
      ;(node.command === root ? global : own).push(`    ${names(o).map(pattern).join('|')}) ${reply(o)}; return ;;`)
    }
  }
  return [...own, ...global]
}

function optionsOf(root: Command): Option[] {
  const seen = new Map<string, Option>()
  for (const node of nodesOf(root)) for (const o of visible(node.command.options)) seen.set(o.flags, o)
  return [...seen.values()]
}

/** A single-quoted word for bash and zsh. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`
/** A single-quoted word for fish, where a backslash escapes a quote or a backslash inside the quotes. */
const fishQuote = (text: string) => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`

function bash(root: Command): string {
  const nodes = nodesOf(root)
  const options = optionsOf(root).filter(takesValue)
  const valueFlags = [...new Set(options.flatMap(names))]
  const commandPaths = nodes.filter((n) => n.path).map((n) => quote(n.path))
  const values = valueCases(root, (o) =>
    o.argChoices
      ? `COMPREPLY=($(compgen -W ${quote(o.argChoices.join(' '))} -- "$cur"))`
      : wantsFile(o)
        ? 'COMPREPLY=($(compgen -f -- "$cur"))'
        : 'COMPREPLY=()',
  )
  const wordCases = nodes.map(
    (n) =>
      `    ${quote(n.path)}) words=${quote(
        wordsAt(n, root)
          .map((w) => w.word)
          .join(' '),
      )} ;;`,
  )
  return `# bash completion for platform, made by \`platform completion bash\`.
# Install: platform completion bash > ~/.local/share/bash-completion/completions/platform
#      or: add  source <(platform completion bash)  to ~/.bashrc
_platform_completions() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local cmdpath="" word skip="" words="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ -n $skip ]]; then skip=""; continue; fi
    case "$word" in
      ${valueFlags.join('|')}) skip=1; continue ;;
      -*) continue ;;
    esac
    case "\${cmdpath:+$cmdpath }$word" in
      ${commandPaths.join('|')}) cmdpath="\${cmdpath:+$cmdpath }$word" ;;
    esac
  done
  case "$cmdpath|$prev" in
${values.join('\n')}
  esac
  case "$cmdpath" in
${wordCases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _platform_completions platform
`
}

/** zsh's _describe entries are `word:description`, the colons in a word escaped. */
const describeEntry = (w: Word) => quote(w.description ? `${w.word.replace(/:/g, '\\:')}:${w.description}` : w.word.replace(/:/g, '\\:'))

function zsh(root: Command): string {
  const nodes = nodesOf(root)
  const options = optionsOf(root).filter(takesValue)
  const valueFlags = [...new Set(options.flatMap(names))]
  const commandPaths = nodes.filter((n) => n.path).map((n) => quote(n.path))
  const values = valueCases(root, (o) => (o.argChoices ? `compadd -- ${o.argChoices.map(quote).join(' ')}` : wantsFile(o) ? '_files' : ':'))
  const wordCases = nodes.map((n) => `    ${quote(n.path)}) candidates=(${wordsAt(n, root).map(describeEntry).join(' ')}) ;;`)
  return `#compdef platform
# zsh completion for platform, made by \`platform completion zsh\`.
# Install: platform completion zsh > "\${fpath[1]}/_platform"   (then start a new shell)
#      or: add  source <(platform completion zsh)  to ~/.zshrc, after compinit
_platform() {
  local -a candidates
  local cmdpath="" word skip="" i
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    if [[ -n $skip ]]; then skip=""; continue; fi
    case "$word" in
      ${valueFlags.join('|')}) skip=1; continue ;;
      -*) continue ;;
    esac
    case "\${cmdpath:+$cmdpath }$word" in
      ${commandPaths.join('|')}) cmdpath="\${cmdpath:+$cmdpath }$word" ;;
    esac
  done
  case "$cmdpath|\${words[CURRENT-1]}" in
${values.join('\n')}
  esac
  case "$cmdpath" in
${wordCases.join('\n')}
  esac
  _describe 'platform' candidates
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _platform "$@"
else
  compdef _platform platform
fi
`
}

function fish(root: Command): string {
  const nodes = nodesOf(root)
  const valueFlags = [...new Set(optionsOf(root).filter(takesValue).flatMap(names))]
  const lines: string[] = []
  const optionLine = (condition: string, o: Option) => {
    const parts = ['complete -c platform', condition].filter(Boolean)
    if (o.long) parts.push(`-l ${o.long.replace(/^--/, '')}`)
    if (o.short) parts.push(`-s ${o.short.replace(/^-/, '')}`)
    if (takesValue(o)) parts.push(o.argChoices ? `-x -a ${fishQuote(o.argChoices.join(' '))}` : wantsFile(o) ? '-r -F' : '-x')
    parts.push(`-d ${fishQuote(firstLine(o.description))}`)
    return parts.join(' ')
  }
  for (const node of nodes) {
    const at = `-n ${fishQuote(`__platform_at ${fishQuote(node.path)}`)}`
    for (const sub of node.command.commands) lines.push(`complete -c platform ${at} -a ${sub.name()} -d ${fishQuote(firstLine(sub.description()))}`)
    const choices = (node.command.registeredArguments[0] as Argument | undefined)?.argChoices
    if (choices) lines.push(`complete -c platform ${at} -a ${fishQuote(choices.join(' '))}`)
    for (const o of visible(node.command.options)) lines.push(optionLine(node === nodes[0] ? '' : at, o))
  }
  return `# fish completion for platform, made by \`platform completion fish\`.
# Install: platform completion fish > ~/.config/fish/completions/platform.fish

# The subcommand the command line is at ('' for none, 'runs submit'), skipping options and their values.
function __platform_path
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmdpath
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case ${valueFlags.join(' ')}
                set skip 1
                continue
            case '-*'
                continue
        end
        if contains -- (string join ' ' $cmdpath $t) ${nodes
          .filter((n) => n.path)
          .map((n) => fishQuote(n.path))
          .join(' ')}
            set cmdpath $cmdpath $t
        end
    end
    string join ' ' $cmdpath
end

function __platform_at
    set -l at (__platform_path)
    test "$at" = "$argv[1]"
end

complete -c platform -f
${lines.join('\n')}
`
}

export function completionScript(shell: Shell, root: Command): string {
  switch (shell) {
    case 'bash':
      return bash(root)
    case 'zsh':
      return zsh(root)
    case 'fish':
      return fish(root)
  }
}

export function register(program: Command, cli: Cli) {
  program
    .command('completion')
    .description('Print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      examples(
        'source <(platform completion bash)                                       # in ~/.bashrc',
        'platform completion zsh > "${fpath[1]}/_platform"',
        'platform completion fish > ~/.config/fish/completions/platform.fish',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [shell] = command.processedArgs as [Shell]
        let root = command
        while (root.parent) root = root.parent
        session.out.line(completionScript(shell, root).trimEnd())
      }),
    )
}
